import request from 'supertest';
import { OPERATOR_TOKEN } from './harness';
import { SmtpSink, verificationToken } from './smtp-sink';

export const DEVELOPER_PASSWORD = 'correct horse battery staple';

export interface OnboardedDeveloper {
  id: string;
  email: string;
  token: string;
  auth: { authorization: string };
}

/** Steps one and two through the real API and a real mail: account, verified email, console login. */
export async function onboardDeveloper(
  url: string,
  smtp: SmtpSink,
  email: string,
  options: { verify?: boolean } = {},
): Promise<OnboardedDeveloper> {
  await request(url).post('/v1/providers/account').send({ company_name: 'Acme Tools', email, password: DEVELOPER_PASSWORD }).expect(202);
  if (options.verify !== false) {
    const mail = await smtp.mailTo(email);
    await request(url)
      .post('/v1/providers/account/verify')
      .send({ token: verificationToken(mail) })
      .expect(200);
  }
  const login = await request(url).post('/v1/providers/auth/login').send({ email, password: DEVELOPER_PASSWORD }).expect(200);
  const auth = { authorization: `Bearer ${login.body.token}` };
  // Creation answers the same for a new and a taken address, so the id comes with the account, after login.
  const account = await request(url).get('/v1/providers/account').set(auth).expect(200);
  return { id: account.body.id, email, token: login.body.token, auth };
}

export interface RegisteredApp {
  id: string;
  client_id: string;
  client_secret: string;
  /** Shown once, when registering with a `webhook_url` created the app's webhook profile. */
  webhook_secret?: string;
}

export async function registerApp(url: string, developer: OnboardedDeveloper, body: Record<string, unknown> = {}): Promise<RegisteredApp> {
  const res = await request(url)
    .post('/v1/providers/apps')
    .set(developer.auth)
    .send({
      name: 'Acme Calendar',
      description: 'Calendar sync',
      redirect_uris: ['https://acme.example/callback'],
      webhook_url: 'https://acme.example/hooks',
      ...body,
    })
    .expect(201);
  return res.body;
}

/** client_credentials through the token endpoint with HTTP Basic, as a plain HTTP client would. */
export async function appToken(url: string, app: RegisteredApp, scope?: string): Promise<string> {
  const res = await request(url)
    .post('/v1/auth/token')
    .auth(app.client_id, app.client_secret)
    .type('form')
    .send({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) })
    .expect(200);
  return res.body.access_token;
}

export interface PublishedPackage {
  packageId: string;
  versionId: string;
  slug: string;
}

/**
 * Onboarding steps four to seven through the real API: create the package,
 * then submit, review and publish its first version (`publishVersion`).
 */
export async function publishPackage(
  url: string,
  appAuth: { authorization: string },
  body: Record<string, unknown>,
): Promise<PublishedPackage> {
  const created = await request(url).post('/v1/providers/packages').set(appAuth).send(body).expect(201);
  const packageId = created.body.id as string;
  const versionId = created.body.versions[0].id as string;
  await publishVersion(url, appAuth, packageId, versionId);
  return { packageId, versionId, slug: created.body.slug as string };
}

/** Submits a version (running conformance against its runtime), approves it as the operator when it went to manual review, and publishes it. */
export async function publishVersion(url: string, appAuth: { authorization: string }, packageId: string, versionId: string): Promise<void> {
  const submitted = await request(url)
    .post(`/v1/providers/packages/manage/${packageId}/versions/${versionId}/submit`)
    .set(appAuth)
    .expect(200);
  if (submitted.body.review === 'manual') {
    await request(url)
      .post(`/v1/operator/packages/${packageId}/versions/${versionId}/approve`)
      .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
      .expect(200);
  }
  await request(url).post(`/v1/providers/packages/manage/${packageId}/versions/${versionId}/publish`).set(appAuth).expect(200);
}
