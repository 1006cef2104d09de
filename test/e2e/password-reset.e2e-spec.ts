import { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { appToken, DEVELOPER_PASSWORD, onboardDeveloper, registerApp } from '../support/providers';
import { PasswordResets } from '../../src/modules/providers/password-resets.service';
import { ReceivedMail, SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const NEW_PASSWORD = 'a brand new passphrase for the console';
const RESETS_PER_EMAIL = 5;
const RESETS_PER_ADDRESS = 20;

type Answer = request.Response;

/** The token carried by the link in a reset mail. */
function resetToken(mail: ReceivedMail): string {
  const match = /\/console\/reset-password\?token=([^\s]+)/.exec(mail.text);
  if (!match) throw new Error(`no reset link in: ${mail.text}`);
  return decodeURIComponent(match[1]);
}

/** Two api instances on one database and one Redis, and a worker that sends the outbox mail through the SMTP sink. */
async function twoInstances(
  smtp: SmtpSink,
): Promise<{ env: TestEnvironment; urls: [string, string]; dataSource: DataSource; app: INestApplicationContext }> {
  const env = await TestEnvironment.create({ SMTP_URL: smtp.url });
  const first = await env.startApi();
  const second = await env.startApi();
  await env.startWorker();
  return { env, urls: [first.url, second.url], dataSource: first.app.get(getDataSourceToken()), app: first.app };
}

/** Waits until the worker has done every queued reset request (a done job's outbox row is deleted). */
async function resetJobsDone(dataSource: DataSource): Promise<void> {
  await waitFor(
    async () => (await dataSource.query(`SELECT count(*)::int AS n FROM job_outbox WHERE queue = 'password-resets'`))[0].n === 0,
    { what: 'the queued reset requests to be done' },
  );
}

/** The answer with the address replaced, to compare answers about two addresses. */
const normalised = (answer: Answer, email: string) => ({
  status: answer.status,
  type: answer.headers['content-type'],
  cacheControl: answer.headers['cache-control'],
  body: JSON.parse(JSON.stringify(answer.body).split(email).join('<email>')),
});

describe('developer password reset', () => {
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
  });
  afterAll(async () => {
    await smtp.close();
  });

  describe('the reset flow', () => {
    let env: TestEnvironment;
    let urls: [string, string];
    let dataSource: DataSource;
    let app: INestApplicationContext;
    beforeAll(async () => {
      ({ env, urls, dataSource, app } = await twoInstances(smtp));
    });
    afterAll(async () => {
      await env.close();
    });

    const requestReset = (email: string, url = urls[0]) => request(url).post('/v1/providers/account/password/reset').send({ email });
    const confirm = (token: string, password = NEW_PASSWORD, url = urls[1]) =>
      request(url).post('/v1/providers/account/password/reset/confirm').send({ token, password });
    const login = (email: string, password: string, url = urls[0]) =>
      request(url).post('/v1/providers/auth/login').send({ email, password });
    const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));
    /** Requests a reset and returns the token of the link that arrives (the `count`-th mail to the address). */
    async function linkFor(email: string, count: number): Promise<string> {
      await requestReset(email).expect(202);
      return resetToken(await smtp.mailTo(email, count));
    }

    it('mails a link, sets the new password, refuses the old one and ends every console session at once on every instance', async () => {
      const email = 'reset-flow@example.com';
      const developer = await onboardDeveloper(urls[0], smtp, email);
      const second = await login(email, DEVELOPER_PASSWORD, urls[1]).expect(200);
      const secondAuth = { authorization: `Bearer ${second.body.token}` };
      const app = await registerApp(urls[0], developer, { webhook_url: undefined });
      const appAuth = { authorization: `Bearer ${await appToken(urls[0], app)}` };
      // Both console tokens are in use (and their verification cached) on both instances.
      for (const url of urls) {
        await request(url).get('/v1/providers/account').set(developer.auth).expect(200);
        await request(url).get('/v1/providers/account').set(secondAuth).expect(200);
      }

      const asked = await requestReset('Reset-Flow@Example.com').expect(202);
      expect(asked.body).toEqual({ email: 'Reset-Flow@Example.com', message: expect.stringContaining('60 minutes') });
      const mail = await smtp.mailTo(email, 1); // after the verification mail
      expect(mail.subject).toMatch(/reset your developer account password/i);
      const token = resetToken(mail);
      expect(token).toMatch(/^prt_[A-Za-z0-9_-]{43}$/);
      expect(mail.text).toContain(`/console/reset-password?token=${token}`);

      // Only the hash is stored; the mail body in the outbox is sealed.
      const stored = await dataSource.query(`SELECT token_hash, expires_at - created_at AS lifetime FROM password_resets`);
      expect(stored).toHaveLength(1);
      expect(stored[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(stored)).not.toContain(token);
      expect(stored[0].lifetime).toMatchObject({ hours: 1 });
      const [{ leaks }] = await dataSource.query(
        `SELECT count(*)::int AS leaks FROM mail_outbox WHERE body_encrypted LIKE '%' || $1 || '%'`,
        [token],
      );
      expect(leaks).toBe(0);

      const done = await confirm(token).expect(200);
      expect(done.body).toEqual({ email, message: expect.stringContaining('signed out') });

      // Every console token of the account is refused at once, on both instances.
      for (const url of urls) {
        for (const auth of [developer.auth, secondAuth]) {
          const refused = await request(url).get('/v1/providers/account').set(auth).expect(401);
          expect(refused.body.type).toBe(problemType('invalid_token'));
        }
      }
      // The app's own credentials belong to the app, not to the person: they keep working.
      await request(urls[1]).get('/v1/providers/apps').set(appAuth).expect(200);
      await appToken(urls[1], app);

      expect((await login(email, DEVELOPER_PASSWORD, urls[1]).expect(401)).body.type).toBe(problemType('invalid_credentials'));
      const fresh = await login(email, NEW_PASSWORD, urls[1]).expect(200);
      await request(urls[0])
        .get('/v1/providers/account')
        .set({ authorization: `Bearer ${fresh.body.token}` })
        .expect(200);

      const notice = await smtp.mailTo(email, 2);
      expect(notice.subject).toMatch(/password was changed/i);
      expect(notice.text).not.toContain(NEW_PASSWORD);
    });

    it('answers an unknown address exactly as a known one and sends it nothing', async () => {
      const known = 'reset-known@example.com';
      await onboardDeveloper(urls[0], smtp, known);
      const unknown = 'nobody-here@example.com';

      const forUnknown = await requestReset(unknown);
      const forKnown = await requestReset(known);
      expect(normalised(forUnknown, unknown)).toEqual(normalised(forKnown, known));
      expect(forUnknown.status).toBe(202);
      expect(forUnknown.body).not.toHaveProperty('id');

      await smtp.mailTo(known, 1);
      await resetJobsDone(dataSource);
      expect(mailsTo(unknown)).toEqual([]);
      const [{ mails }] = await dataSource.query(`SELECT count(*)::int AS mails FROM mail_outbox WHERE lower(recipient) = $1`, [unknown]);
      expect(mails).toBe(0);
    });

    it('sends one link for a retried job (the job id is the link id) and none for an address without an active account', async () => {
      const email = 'reset-retried@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      const resets = app.get(PasswordResets);
      expect(await resets.sendLink('task_retried_reset_job', email)).toBe('sent');
      expect(await resets.sendLink('task_retried_reset_job', email)).toBe('already_sent');
      expect(await resets.sendLink('task_unknown_reset_job', 'reset-nobody@example.com')).toBe('no_account');
      await smtp.mailTo(email, 1);
      const [{ mails }] = await dataSource.query(
        `SELECT count(*)::int AS mails FROM mail_outbox WHERE recipient = $1 AND subject LIKE 'Reset%'`,
        [email],
      );
      expect(mails).toBe(1);
    });

    it('takes a link once: a second confirmation answers invalid_reset_token and changes nothing', async () => {
      const email = 'reset-once@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      const token = await linkFor(email, 1);
      await confirm(token).expect(200);
      const again = await confirm(token, 'yet another passphrase here').expect(400);
      expect(again.body).toMatchObject({ type: problemType('invalid_reset_token'), status: 400, field: 'token' });
      expect(again.body.detail).toMatch(/already used/);
      await login(email, NEW_PASSWORD).expect(200);
      await login(email, 'yet another passphrase here').expect(401);
    });

    it('refuses unknown, malformed and replaced links with invalid_reset_token', async () => {
      const email = 'reset-replaced@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      const older = await linkFor(email, 1);
      const newer = await linkFor(email, 2);

      for (const token of [older, 'prt_' + 'A'.repeat(43), "'; DROP TABLE password_resets; --", 'vt_' + older.slice(4)]) {
        const refused = await confirm(token).expect(400);
        expect(refused.body).toMatchObject({ type: problemType('invalid_reset_token'), status: 400, field: 'token' });
      }
      expect((await confirm(older)).body.detail).toMatch(/replaced by a newer one/);
      // A verification token is not a reset token, even of the same account.
      const verification = await onboardDeveloper(urls[0], smtp, 'reset-wrong-kind@example.com', { verify: false });
      const verifyMail = await smtp.mailTo(verification.email);
      const verifyToken = /verify-email\?token=([^\s]+)/.exec(verifyMail.text)![1];
      expect((await confirm(decodeURIComponent(verifyToken)).expect(400)).body.type).toBe(problemType('invalid_reset_token'));

      await confirm(newer).expect(200);
      await login(email, NEW_PASSWORD).expect(200);
    });

    it('refuses a link past its hour with invalid_reset_token', async () => {
      const email = 'reset-expired@example.com';
      const developer = await onboardDeveloper(urls[0], smtp, email);
      const token = await linkFor(email, 1);
      // An hour later, without waiting one: the stored expiry moves to just past now.
      await dataSource.query(`UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE developer_id = $1`, [developer.id]);
      const refused = await confirm(token).expect(400);
      expect(refused.body).toMatchObject({ type: problemType('invalid_reset_token'), field: 'token' });
      expect(refused.body.detail).toMatch(/expired/);
      await login(email, DEVELOPER_PASSWORD).expect(200);
      await request(urls[0]).get('/v1/providers/account').set(developer.auth).expect(200); // nothing was revoked
    });

    it('refuses a weak password with the sign-up rules and leaves the link usable', async () => {
      const email = 'reset-weak@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      const token = await linkFor(email, 1);

      const short = await confirm(token, 'too short').expect(400);
      expect(short.body).toMatchObject({ status: 400, field: 'password' });
      const withEmail = await confirm(token, `my ${email.toUpperCase()} password`).expect(400);
      expect(withEmail.body).toMatchObject({ type: problemType('invalid_format'), field: 'password' });
      const tooLong = await confirm(token, 'x'.repeat(257)).expect(400);
      expect(tooLong.body).toMatchObject({ status: 400, field: 'password' });
      const missing = await request(urls[0]).post('/v1/providers/account/password/reset/confirm').send({ token }).expect(400);
      expect(missing.body).toMatchObject({ status: 400 });

      await login(email, DEVELOPER_PASSWORD).expect(200);
      await confirm(token).expect(200);
      await login(email, NEW_PASSWORD).expect(200);
    });

    it('lets exactly one of 30 concurrent confirmations with the same link through, across two instances', async () => {
      const email = 'reset-race@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      const token = await linkFor(email, 1);
      const passwords = Array.from({ length: 30 }, (_, i) => `concurrent passphrase number ${i}`);
      const answers = await Promise.all(passwords.map((password, i) => confirm(token, password, urls[i % 2])));

      const winners = answers.flatMap((answer, i) => (answer.status === 200 ? [passwords[i]] : []));
      expect(winners).toHaveLength(1);
      for (const answer of answers.filter((a) => a.status !== 200)) {
        expect(answer.status).toBe(400);
        expect(answer.body.type).toBe(problemType('invalid_reset_token'));
      }
      // The winner's password is the one that holds.
      await login(email, winners[0]).expect(200);
      await login(
        email,
        passwords.find((p) => p !== winners[0])!,
      ).expect(401);
    }, 90_000);

    it('verifies a not yet verified address, since the link reached its mailbox', async () => {
      const email = 'reset-unverified@example.com';
      const developer = await onboardDeveloper(urls[0], smtp, email, { verify: false });
      expect((await request(urls[0]).get('/v1/providers/account').set(developer.auth).expect(200)).body.email_verified).toBe(false);
      const token = await linkFor(email, 1);
      await confirm(token).expect(200);
      const fresh = await login(email, NEW_PASSWORD).expect(200);
      const account = await request(urls[0])
        .get('/v1/providers/account')
        .set({ authorization: `Bearer ${fresh.body.token}` });
      expect(account.body).toMatchObject({ email_verified: true, email_verified_at: expect.any(String) });
    });

    it('keeps a suspended account out: no link is sent, and a link from before the suspension answers account_suspended', async () => {
      const email = 'reset-suspended@example.com';
      const developer = await onboardDeveloper(urls[0], smtp, email);
      const token = await linkFor(email, 1);
      const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
      await request(urls[0]).post(`/v1/operator/developers/${developer.id}/suspend`).set(operator).send({ reason: 'abuse' }).expect(200);
      await smtp.mailTo(email, 2); // the suspension notice

      const refused = await confirm(token).expect(403);
      expect(refused.body.type).toBe(problemType('account_suspended'));

      const asked = await requestReset(email).expect(202);
      expect(normalised(asked, email)).toEqual(
        normalised(await requestReset('nobody-suspended@example.com'), 'nobody-suspended@example.com'),
      );
      await resetJobsDone(dataSource);
      const [{ links }] = await dataSource.query(
        `SELECT count(*)::int AS links FROM password_resets WHERE developer_id = $1 AND invalidated_at IS NULL`,
        [developer.id],
      );
      expect(links).toBe(1); // only the one from before the suspension

      // Reinstated, the old password still holds: the refused confirmation changed nothing.
      await request(urls[0]).post(`/v1/operator/developers/${developer.id}/reinstate`).set(operator).expect(200);
      await login(email, DEVELOPER_PASSWORD).expect(200);
    });

    it('names the reset in the notice a sign-up with a taken address sends', async () => {
      const email = 'reset-taken@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      await request(urls[0])
        .post('/v1/providers/account')
        .send({ company_name: 'Squatter', email, password: 'the squatter password' })
        .expect(202);
      const notice = await smtp.mailTo(email, 1);
      expect(notice.subject).toMatch(/sign-up attempt/i);
      expect(notice.text).toContain('/console/forgot-password');
      expect(notice.text).toContain('POST /v1/providers/account/password/reset');
    });

    it('documents both routes in OpenAPI', async () => {
      const doc = await request(urls[0]).get('/docs/openapi.json').expect(200);
      const schemaOf = (ref: string) => doc.body.components.schemas[ref.split('/').pop()!];

      const asked = doc.body.paths['/v1/providers/account/password/reset'].post;
      expect(Object.keys(asked.responses).filter((status) => !/^[45]/.test(status))).toEqual(['202']);
      expect(Object.keys(asked.responses)).toEqual(expect.arrayContaining(['400', '429']));
      expect(schemaOf(asked.requestBody.content['application/json'].schema.$ref)).toMatchObject({ required: ['email'] });
      expect(schemaOf(asked.responses['202'].content['application/json'].schema.$ref)).toMatchObject({ required: ['email', 'message'] });

      const confirmed = doc.body.paths['/v1/providers/account/password/reset/confirm'].post;
      expect(Object.keys(confirmed.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '429']));
      expect(confirmed.responses['400'].content).toHaveProperty(['application/problem+json']);
      expect(schemaOf(confirmed.requestBody.content['application/json'].schema.$ref)).toMatchObject({
        required: ['token', 'password'],
      });
    });
  });

  describe('request limits', () => {
    let env: TestEnvironment;
    let urls: [string, string];
    let dataSource: DataSource;
    beforeEach(async () => {
      // Every test request comes from 127.0.0.1: each limit gets a fresh Redis prefix.
      ({ env, urls, dataSource } = await twoInstances(smtp));
    });
    afterEach(async () => {
      await env.close();
    });

    const requestReset = (email: string, i: number) =>
      request(urls[i % 2])
        .post('/v1/providers/account/password/reset')
        .send({ email });

    function expectRefusal(answer: Answer): void {
      expect(answer.status).toBe(429);
      expect(answer.body).toMatchObject({ type: problemType('rate_limit_exceeded'), status: 429 });
      const retryAfter = Number(answer.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3_600);
    }

    it('takes 5 requests per address an hour, known or not, across instances and at once, then answers rate_limit_exceeded the same way', async () => {
      const known = 'reset-limit@example.com';
      await onboardDeveloper(urls[0], smtp, known);
      const unknown = 'reset-limit-nobody@example.com';
      // 16 requests in all: under the per-client-address limit, so only the per-email one shows.
      const [forKnown, forUnknown] = await Promise.all(
        [known, unknown].map((email) => Promise.all(Array.from({ length: 8 }, (_, i) => requestReset(email, i)))),
      );
      for (const answers of [forKnown, forUnknown]) {
        expect(answers.filter((a) => a.status === 202)).toHaveLength(RESETS_PER_EMAIL);
        for (const answer of answers.filter((a) => a.status !== 202)) expectRefusal(answer);
      }
      // Only the accepted requests sent links: five, of which only the newest is still open.
      await resetJobsDone(dataSource);
      const [{ links, open }] = await dataSource.query(
        `SELECT count(*)::int AS links, count(*) FILTER (WHERE invalidated_at IS NULL)::int AS open FROM password_resets`,
      );
      expect({ links, open }).toEqual({ links: RESETS_PER_EMAIL, open: 1 });
    }, 90_000);

    it('takes 20 requests per client address an hour, whatever the emails', async () => {
      const answers = await Promise.all(Array.from({ length: 26 }, (_, i) => requestReset(`spray${i}@example.com`, i)));
      expect(answers.filter((a) => a.status === 202)).toHaveLength(RESETS_PER_ADDRESS);
      for (const answer of answers.filter((a) => a.status !== 202)) expectRefusal(answer);
    });
  });
});
