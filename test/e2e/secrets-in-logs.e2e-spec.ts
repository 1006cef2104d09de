import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { TestEnvironment } from '../support/harness';
import { DEVELOPER_PASSWORD } from '../support/providers';
import { SmtpSink, verificationToken } from '../support/smtp-sink';

/**
 * Runs the compiled service as operators do and captures everything it prints,
 * then walks onboarding and checks that no secret shows up in any log line and
 * that each appears in exactly one response: its one-time reveal.
 */
describe('secrets never reach the logs', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create();
  });
  afterAll(async () => {
    await env.close();
    await smtp.close();
  });

  it('keeps passwords, verification tokens, bearer tokens and client secrets out of debug logs', async () => {
    const service = env.spawnRole('main', { APP_ROLE: 'all', LOG_LEVEL: 'debug', SMTP_URL: smtp.url });
    const [, port] = await service.waitForOutput(/api listening on http:\/\/[^:]+:(\d+)/);
    const url = `http://127.0.0.1:${port}`;

    await request(url)
      .post('/v1/providers/account')
      .send({ company_name: 'Logs Inc', email: 'logs@example.com', password: DEVELOPER_PASSWORD })
      .expect(202);
    const token = verificationToken(await smtp.mailTo('logs@example.com'));
    await request(url).post('/v1/providers/account/verify').send({ token }).expect(200);
    const login = await request(url)
      .post('/v1/providers/auth/login')
      .send({ email: 'logs@example.com', password: DEVELOPER_PASSWORD })
      .expect(200);
    const app = await request(url)
      .post('/v1/providers/apps')
      .set('authorization', `Bearer ${login.body.token}`)
      .send({ name: 'Logged' })
      .expect(201);
    const issued = await request(url)
      .post('/v1/auth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: app.body.client_id, client_secret: app.body.client_secret })
      .expect(200);
    await request(url).get('/v1/providers/apps').set('authorization', `Bearer ${issued.body.access_token}`).expect(200);
    // A failing call with a secret in the body must not echo it either.
    const wrongSecret = `cs_${randomBytes(16).toString('hex')}`;
    await request(url)
      .post('/v1/auth/token')
      .send({ grant_type: 'client_credentials', client_id: app.body.client_id, client_secret: wrongSecret })
      .expect(401);
    const listed = await request(url)
      .get(`/v1/providers/apps/${app.body.id}`)
      .set('authorization', `Bearer ${login.body.token}`)
      .expect(200);
    expect(JSON.stringify(listed.body)).not.toContain(app.body.client_secret);

    service.child.kill('SIGTERM');
    await service.exited;
    expect(service.output).toContain('request completed'); // the logs were really captured
    for (const secret of [DEVELOPER_PASSWORD, token, login.body.token, app.body.client_secret, issued.body.access_token, wrongSecret]) {
      expect(service.output).not.toContain(secret);
    }
  });

  it('redacts verification links from logged mail in production when no SMTP server is configured', async () => {
    // Its own database: keys sealed under the development key cannot be opened with a production ENCRYPTION_KEY.
    const production = await TestEnvironment.create();
    const service = production.spawnRole('main', {
      APP_ROLE: 'all',
      NODE_ENV: 'production',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      IDP_PROJECT_ID: 'logs-test',
    });
    const [, port] = await service.waitForOutput(/api listening on http:\/\/[^:]+:(\d+)/);
    await request(`http://127.0.0.1:${port}`)
      .post('/v1/providers/account')
      .send({ company_name: 'Quiet', email: 'quiet@example.com', password: DEVELOPER_PASSWORD })
      .expect(202);
    await service.waitForOutput(/mail \(no SMTP_URL configured\)/);
    service.child.kill('SIGTERM');
    await service.exited;
    expect(service.output).toContain('[link redacted]');
    expect(service.output).not.toMatch(/verify-email\?token=/);
    await production.close();
  });
});
