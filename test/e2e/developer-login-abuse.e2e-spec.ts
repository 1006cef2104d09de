import { getDataSourceToken } from '@nestjs/typeorm';
import { authenticator } from 'otplib';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { TestEnvironment } from '../support/harness';
import { DEVELOPER_PASSWORD, onboardDeveloper, OnboardedDeveloper } from '../support/providers';
import { SmtpSink, verificationToken } from '../support/smtp-sink';
import { freshTotp, totpStep } from '../support/totp';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
/** Attempts allowed per email address, and per client address, in 15 minutes. */
const ATTEMPTS_PER_EMAIL = 5;
const ATTEMPTS_PER_ADDRESS = 50;

type Answer = request.Response;

/**
 * Two api instances sharing one database and one Redis, as in production, so
 * that a limit kept in one process's memory would show. Every scenario has its
 * own environment: all test requests come from 127.0.0.1, and one scenario's
 * attempts must not spend the next one's per-address allowance.
 */
async function twoInstances(smtp?: SmtpSink): Promise<{ env: TestEnvironment; urls: [string, string]; dataSource: DataSource }> {
  const env = await TestEnvironment.create(smtp ? { SMTP_URL: smtp.url } : {});
  const first = await env.startApi();
  const second = await env.startApi();
  if (smtp) await env.startWorker(); // sends the outbox mail through SMTP
  return { env, urls: [first.url, second.url], dataSource: first.app.get(getDataSourceToken()) };
}

/** Fires every request at once, alternating between the instances. */
function atOnce(urls: [string, string], bodies: object[]): Promise<Answer[]> {
  return Promise.all(
    bodies.map((body, i) =>
      request(urls[i % 2])
        .post('/v1/providers/auth/login')
        .send(body),
    ),
  );
}

function tally(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key = answer.status === 200 ? 'token' : String(answer.body.type).split('#')[1];
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function expectLockRefusal(answer: Answer): void {
  expect(answer.status).toBe(429);
  expect(answer.body).toMatchObject({ type: problemType('rate_limit_exceeded'), status: 429 });
  const retryAfter = Number(answer.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(900);
}

describe('developer login under attack', () => {
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await SmtpSink.start();
  });
  afterAll(async () => {
    await smtp.close();
  });

  describe('concurrent password guesses against one account', () => {
    let env: TestEnvironment;
    let urls: [string, string];
    beforeAll(async () => {
      ({ env, urls } = await twoInstances(smtp));
    });
    afterAll(async () => {
      await env.close();
    });

    it('checks at most 5 wrong passwords of 30 concurrent logins across two api instances, refuses the rest with rate_limit_exceeded, then locks out even the right password', async () => {
      const email = 'target@example.com';
      await onboardDeveloper(urls[0], smtp, email);
      const guesses = Array.from({ length: 29 }, (_, i) => ({ email, password: `wrong guess number ${i}` }));
      guesses.splice(17, 0, { email, password: DEVELOPER_PASSWORD });

      const answers = await atOnce(urls, guesses);
      const counts = tally(answers);
      // Every attempt is counted before its password is checked, so only 5 wrong ones get a verdict. The right one
      // may be among the first five (the attacker guessed it); it gives back only its own attempt.
      expect(counts.invalid_credentials ?? 0).toBeLessThanOrEqual(ATTEMPTS_PER_EMAIL);
      expect(counts.token ?? 0).toBeLessThanOrEqual(1);
      expect(counts.rate_limit_exceeded).toBeGreaterThanOrEqual(30 - ATTEMPTS_PER_EMAIL - (counts.token ?? 0));
      for (const answer of answers.filter((a) => a.status === 429)) expectLockRefusal(answer);
      for (const answer of answers.filter((a) => a.status === 401)) expect(answer.body.type).toBe(problemType('invalid_credentials'));

      // Locked for the rest of the window, on both instances, whatever the password.
      for (const url of urls) {
        expectLockRefusal(await request(url).post('/v1/providers/auth/login').send({ email, password: DEVELOPER_PASSWORD }));
      }
    });
  });

  describe('concurrent and replayed TOTP codes', () => {
    type MfaDeveloper = OnboardedDeveloper & { secret: string; confirmedStep: number };
    let env: TestEnvironment;
    let urls: [string, string];
    let burst: MfaDeveloper;
    let replayed: MfaDeveloper;

    /** An onboarded developer with MFA on; `confirmedStep` is the time step of the code that turned it on. */
    async function withMfa(email: string, marginMs?: number): Promise<MfaDeveloper> {
      const developer = await onboardDeveloper(urls[0], smtp, email);
      const enrol = await request(urls[0]).post('/v1/providers/account/mfa').set(developer.auth).expect(200);
      const { code, step } = await freshTotp(enrol.body.secret, { marginMs });
      await request(urls[0]).post('/v1/providers/account/mfa/confirm').set(developer.auth).send({ code }).expect(200);
      return { ...developer, secret: enrol.body.secret, confirmedStep: step };
    }

    beforeAll(async () => {
      ({ env, urls } = await twoInstances(smtp));
      // Enrolled together, so one wait for the next time step serves both tests below.
      [burst, replayed] = await Promise.all([withMfa('mfa-burst@example.com'), withMfa('mfa-replay@example.com')]);
    });
    afterAll(async () => {
      await env.close();
    });

    it('refuses the code that confirmed the enrolment when it is replayed to log in', async () => {
      const developer = await withMfa('mfa-confirm-replay@example.com', 5_000);
      const code = authenticator.generate(developer.secret);
      const replay = await request(urls[1])
        .post('/v1/providers/auth/login')
        .send({ email: developer.email, password: DEVELOPER_PASSWORD, totp: code })
        .expect(401);
      expect(replay.body).toMatchObject({ type: problemType('mfa_required'), field: 'totp' });
      expect(replay.body.detail).toMatch(/already used/);
      expect(totpStep()).toBe(developer.confirmedStep);
    });

    it('issues exactly one token for 30 concurrent logins with the right password and the same right code', async () => {
      // A step the enrolment did not use, with time left for the whole burst.
      const { code } = await freshTotp(burst.secret, { afterStep: burst.confirmedStep, marginMs: 5_000 });
      const attempt = { email: burst.email, password: DEVELOPER_PASSWORD, totp: code };

      const answers = await atOnce(
        urls,
        Array.from({ length: 30 }, () => attempt),
      );
      const counts = tally(answers);
      expect(counts.token).toBe(1);
      // The others were replays (at most the five attempts the account allows) or refused before any check.
      expect(counts.mfa_required ?? 0).toBeLessThanOrEqual(ATTEMPTS_PER_EMAIL);
      expect(counts.rate_limit_exceeded).toBeGreaterThanOrEqual(30 - ATTEMPTS_PER_EMAIL - 1);
      for (const answer of answers.filter((a) => a.status === 429)) expectLockRefusal(answer);
    }, 90_000);

    it('refuses a replay of an accepted code later in the same 30-second step', async () => {
      const { code, step } = await freshTotp(replayed.secret, { afterStep: replayed.confirmedStep, marginMs: 5_000 });
      const attempt = { email: replayed.email, password: DEVELOPER_PASSWORD, totp: code };

      await request(urls[0]).post('/v1/providers/auth/login').send(attempt).expect(200);
      const replay = await request(urls[1]).post('/v1/providers/auth/login').send(attempt).expect(401);
      expect(replay.body).toMatchObject({ type: problemType('mfa_required'), field: 'totp' });
      expect(replay.body.detail).toMatch(/already used/);
      expect(totpStep()).toBe(step); // still the same step: refused as a replay, not as a stale code
    }, 90_000);
  });

  describe('one client address spraying guesses across accounts', () => {
    let env: TestEnvironment;
    let urls: [string, string];
    beforeAll(async () => {
      ({ env, urls } = await twoInstances());
    });
    afterAll(async () => {
      await env.close();
    });

    it('checks at most 50 passwords per address in 15 minutes across different emails, then answers rate_limit_exceeded', async () => {
      const guesses = Array.from({ length: 60 }, (_, i) => ({ email: `spray${i}@example.com`, password: 'Summer2025!Summer2025!' }));
      const answers = await atOnce(urls, guesses);
      const counts = tally(answers);
      expect(counts.invalid_credentials).toBeLessThanOrEqual(ATTEMPTS_PER_ADDRESS);
      expect(counts.rate_limit_exceeded).toBeGreaterThanOrEqual(60 - ATTEMPTS_PER_ADDRESS);
      for (const answer of answers.filter((a) => a.status === 429)) expectLockRefusal(answer);
    });
  });

  describe('account creation', () => {
    let env: TestEnvironment;
    let urls: [string, string];
    let dataSource: DataSource;
    beforeAll(async () => {
      ({ env, urls, dataSource } = await twoInstances(smtp));
    });
    afterAll(async () => {
      await env.close();
    });

    const signUp = (email: string, company_name: string, password: string) =>
      request(urls[0]).post('/v1/providers/account').send({ company_name, email, password });
    const normalised = (answer: Answer, email: string) => ({
      status: answer.status,
      type: answer.headers['content-type'],
      location: answer.headers.location,
      body: JSON.parse(JSON.stringify(answer.body).split(email).join('<email>')),
    });

    it('answers a taken address exactly as a new one, mails the owner instead, and changes nothing on the account', async () => {
      const owner = await signUp('owner@example.com', 'Owner Co', DEVELOPER_PASSWORD);
      expect(owner.status).toBe(202);
      expect(owner.body).toEqual({ email: 'owner@example.com', message: expect.stringContaining('owner@example.com') });
      verificationToken(await smtp.mailTo('owner@example.com'));

      const taken = await signUp('Owner@Example.com', 'Squatter Ltd', 'the squatter password');
      const fresh = await signUp('newcomer@example.com', 'Newcomer Inc', 'the newcomer password');
      expect(normalised(taken, 'Owner@Example.com')).toEqual(normalised(fresh, 'newcomer@example.com'));
      expect(taken.body).not.toHaveProperty('id');

      // The owner learns of the attempt by mail; the newcomer gets the verification link.
      const notice = await smtp.mailTo('owner@example.com', 1);
      expect(notice.subject).toMatch(/sign-up attempt/i);
      expect(notice.text).toContain('/console/login');
      expect(notice.text).not.toMatch(/verify-email\?token=/);
      expect(notice.text).not.toContain('the squatter password');
      expect(verificationToken(await smtp.mailTo('newcomer@example.com'))).toMatch(/^vt_/);

      // Another attempt within the hour answers the same, but the owner's mailbox is not flooded: one notice an hour.
      const again = await signUp('owner@example.com', 'Squatter Ltd', 'the squatter password');
      expect(normalised(again, 'owner@example.com')).toEqual(normalised(fresh, 'newcomer@example.com'));
      const [{ mails }] = await dataSource.query(
        `SELECT count(*)::int AS mails FROM mail_outbox WHERE lower(recipient) = 'owner@example.com'`,
      );
      expect(mails).toBe(2); // the verification link and one notice

      const rows = await dataSource.query(`SELECT company_name FROM developers WHERE lower(email) = 'owner@example.com'`);
      expect(rows).toEqual([{ company_name: 'Owner Co' }]);
      await request(urls[1])
        .post('/v1/providers/auth/login')
        .send({ email: 'owner@example.com', password: 'the squatter password' })
        .expect(401);
      await request(urls[1])
        .post('/v1/providers/auth/login')
        .send({ email: 'owner@example.com', password: DEVELOPER_PASSWORD })
        .expect(200);
    });

    it('documents the one answer, 202 with email and message, in OpenAPI', async () => {
      const doc = await request(urls[0]).get('/docs/openapi.json').expect(200);
      const responses = doc.body.paths['/v1/providers/account'].post.responses;
      // The one success; the errors documented are those of any platform route (input, limits, outages), never a 409 that
      // would tell a taken address apart.
      expect(Object.keys(responses).filter((status) => !/^[45]/.test(status))).toEqual(['202']);
      expect(Object.keys(responses)).not.toContain('409');
      const ref: string = responses['202'].content['application/json'].schema.$ref;
      const schema = doc.body.components.schemas[ref.split('/').pop()!];
      expect(schema).toMatchObject({
        required: ['email', 'message'],
        properties: { email: { type: 'string' }, message: { type: 'string' } },
      });
    });

    it('hashes the password for a taken address too, so the answer takes as long', async () => {
      const timed = async (email: string) => {
        const started = process.hrtime.bigint();
        const answer = await signUp(email, 'Timing', 'a long enough password');
        expect(answer.status).toBe(202);
        return Number(process.hrtime.bigint() - started) / 1e6;
      };
      await timed('timing@example.com');
      const takenTimes: number[] = [];
      const newTimes: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        takenTimes.push(await timed('timing@example.com'));
        newTimes.push(await timed(`timing${i}@example.com`));
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
      // An argon2id hash costs tens of milliseconds; a skipped one would halve the taken address's time or worse.
      expect(median(takenTimes)).toBeGreaterThan(median(newTimes) * 0.5);
    });
  });
});
