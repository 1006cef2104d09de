import request from 'supertest';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { expectCleanError, isPlatformPath } from './envelopes';

/** mulberry32: a tiny seeded generator, so a failing case can be reproduced from the printed seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE_STRINGS = [
  "'; DROP TABLE contacts; --",
  "' OR '1'='1",
  'Robert"); DELETE FROM users WHERE ("1"="1',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '{{7*7}}${7*7}',
  '../../../../etc/passwd',
  '\u0000nul byte',
  '\u202eright-to-left override',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧨 emoji',
  '%s%s%s%n',
  '$where: 1',
];

/** A random JSON value of a wrong or odd shape. */
function randomValue(rand: () => number, depth = 0): unknown {
  const pick = Math.floor(rand() * (depth > 2 ? 9 : 12));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return Math.floor(rand() * 2 ** 53) * (rand() < 0.5 ? -1 : 1);
    case 3:
      return [1e308, -0, 0.1, Number.MAX_SAFE_INTEGER + 2][Math.floor(rand() * 4)];
    case 4:
      return '';
    case 5:
      return 'x'.repeat(Math.floor(rand() * 20_000));
    case 6:
      return HOSTILE_STRINGS[Math.floor(rand() * HOSTILE_STRINGS.length)];
    case 7:
      return '   ';
    case 8:
      return String.fromCharCode(...Array.from({ length: 16 }, () => Math.floor(rand() * 0xd7ff)));
    case 9:
      return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
    case 10:
      return { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } };
    default:
      return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [`k${i}`, randomValue(rand, depth + 1)]));
  }
}

interface Endpoint {
  method: 'post' | 'patch';
  path: string;
  auth: () => Record<string, string>;
  body: () => Record<string, unknown>;
  /** Sent as a form instead of JSON when true (the token endpoint accepts both). */
  form?: boolean;
}

/**
 * Every endpoint family fed missing fields, wrong types, oversize and deeply
 * nested bodies, invalid UTF-8, wrong content types and hostile strings.
 * No answer is a 5xx; every error is the envelope of its path.
 */
describe('bad input sweep', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let user: LoggedInUser;
  let contactId: string;
  let devAuth: Record<string, string>;
  let appAuth: Record<string, string>;
  let appId: string;
  let clientId: string;
  let clientSecret: string;
  let endpoints: Endpoint[];
  const SEED = Number(process.env.FAULT_SEED ?? 20261123);

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      RATE_LIMIT_ENTERPRISE_PER_MINUTE: '10000000',
      RATE_LIMIT_ENTERPRISE_PER_DAY: '100000000',
    });
    ({ url } = await env.startApi());
    await env.startWorker();
    user = await login(url, idp, { sub: 'uid-sweep', name: 'Sweep', email: 'sweep@example.com' });
    await request(url)
      .patch(`/v1/operator/users/${user.id}`)
      .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
      .send({ tier: 'enterprise' })
      .expect(200);
    contactId = (await request(url).post('/v1/contacts').set(user.auth).send({ name: 'Target' }).expect(201)).body.id;
    const developer = await onboardDeveloper(url, smtp, 'sweep-dev@example.com');
    devAuth = developer.auth;
    const app = await registerApp(url, developer);
    appId = app.id;
    clientId = app.client_id;
    clientSecret = app.client_secret;
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    let slug = 0;
    const none = () => ({});
    endpoints = [
      { method: 'post', path: '/v1/contacts', auth: () => user.auth, body: () => ({ name: 'Ada', email: 'ada@example.com' }) },
      { method: 'patch', path: `/v1/contacts/${contactId}`, auth: () => user.auth, body: () => ({ name: 'Ada' }) },
      {
        method: 'post',
        path: '/v1/messages',
        auth: () => user.auth,
        body: () => ({ recipient_id: contactId, content: 'hi', type: 'text' }),
      },
      {
        method: 'patch',
        path: '/v1/soul',
        auth: () => user.auth,
        body: () => ({ traits: { formality: 0.3, humour: 'dry' }, values: ['kind'] }),
      },
      {
        method: 'post',
        path: '/v1/agents/execute',
        auth: () => user.auth,
        body: () => ({ action: 'suggest_reply', params: { contact_id: contactId } }),
      },
      { method: 'post', path: '/v1/installs', auth: () => user.auth, body: () => ({ package_id: 'pkg_0000000000000000000000' }) },
      { method: 'post', path: '/v1/auth/login', auth: none, body: () => ({ firebase_token: 'not.a.jwt' }) },
      {
        method: 'post',
        path: '/v1/providers/account',
        auth: none,
        body: () => ({ company_name: 'Sweep Co', email: `sweep${(slug += 1)}@example.com`, password: 'correct horse battery staple' }),
      },
      {
        method: 'post',
        path: '/v1/providers/apps',
        auth: () => devAuth,
        body: () => ({
          name: 'Sweep',
          description: 'd',
          redirect_uris: ['https://acme.example/cb'],
          webhook_url: 'https://acme.example/h',
        }),
      },
      {
        method: 'post',
        path: '/v1/providers/packages',
        auth: () => appAuth,
        body: () => ({
          appId,
          name: 'Sweep Bank',
          slug: `sweep-bank-${(slug += 1)}`,
          description: 'Balances',
          riskTier: 'data_only',
          runtimeUrl: runtime.url,
          capabilities: (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type === 'state'),
        }),
      },
      {
        method: 'post',
        path: '/v1/auth/token',
        auth: () => ({ authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` }),
        body: () => ({ grant_type: 'client_credentials', scope: 'packages:read' }),
      },
      {
        method: 'post',
        path: '/v1/auth/token',
        form: true,
        auth: none,
        body: () => ({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
      },
    ];
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  const send = (e: Endpoint, body: string | Buffer, contentType = e.form ? 'application/x-www-form-urlencoded' : 'application/json') =>
    request(url)[e.method](e.path).set(e.auth()).set('content-type', contentType).send(body);
  const encode = (e: Endpoint, body: unknown) =>
    e.form && body && typeof body === 'object' && !Array.isArray(body)
      ? new URLSearchParams(
          Object.entries(body as Record<string, unknown>).map(([k, v]): [string, string] => [
            k,
            typeof v === 'string' ? v : JSON.stringify(v),
          ]),
        ).toString()
      : JSON.stringify(body);
  const label = (e: Endpoint) => `${e.method.toUpperCase()} ${e.path}${e.form ? ' (form)' : ''}`;

  function expectNot5xx(res: request.Response, e: Endpoint, what: string): void {
    if (res.status >= 500) throw new Error(`${label(e)} answered ${res.status} to ${what}: ${res.text.slice(0, 400)}`);
    if (res.status >= 400) expectCleanError(res, e.path);
  }

  it('the valid bodies are accepted (the sweep starts from working requests)', async () => {
    for (const e of endpoints) {
      const res = await send(e, encode(e, e.body()));
      expect({ endpoint: label(e), ok: res.status < 300 || e.path === '/v1/installs' || e.path === '/v1/auth/login' }).toEqual({
        endpoint: label(e),
        ok: true,
      });
      expectNot5xx(res, e, 'its valid body');
    }
  });

  it('missing fields: an empty body and each field left out answer 400 in the path’s envelope', async () => {
    for (const e of endpoints) {
      const empty = await send(e, e.form ? '' : '{}');
      expectNot5xx(empty, e, 'an empty object');
      // PATCH bodies may legitimately be empty; every create or exchange needs its fields.
      if (e.method === 'post') expect(empty.status).toBeGreaterThanOrEqual(400);
      for (const field of Object.keys(e.body())) {
        const body = e.body();
        delete body[field];
        expectNot5xx(await send(e, encode(e, body)), e, `a body without ${field}`);
      }
    }
  });

  it(`wrong types and random shapes (seed ${SEED}): never a 5xx`, async () => {
    const rand = prng(SEED);
    for (const e of endpoints) {
      for (let i = 0; i < 40; i += 1) {
        const body = e.body();
        const keys = Object.keys(body);
        const mode = rand();
        if (mode < 0.6) body[keys[Math.floor(rand() * keys.length)]] = randomValue(rand);
        else if (mode < 0.8) body[`unknown_${i}`] = randomValue(rand);
        else {
          for (const k of keys) if (rand() < 0.5) body[k] = randomValue(rand);
        }
        const res = await send(e, encode(e, body));
        expectNot5xx(res, e, `seed ${SEED} case ${i}: ${JSON.stringify(body).slice(0, 300)}`);
      }
      for (const whole of ['[]', '"text"', '42', 'null', 'true', '[{"name":"x"}]']) {
        expectNot5xx(await send(e, whole, 'application/json'), e, `the JSON document ${whole}`);
      }
    }
  });

  it('malformed JSON, wrong content types and an empty body answer 4xx cleanly', async () => {
    for (const e of endpoints) {
      for (const raw of ['{', '{"name":', '{"a":1,}', "{'a':1}", '\u0000', 'NaN']) {
        const res = await send(e, raw, 'application/json');
        expectNot5xx(res, e, `malformed JSON ${JSON.stringify(raw)}`);
        expect(res.status).toBe(400);
      }
      for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']) {
        expectNot5xx(await send(e, '{"name":"x"}', type), e, `content type ${type}`);
      }
      expectNot5xx(await request(url)[e.method](e.path).set(e.auth()), e, 'no body at all');
    }
  });

  it('an oversize body (over the documented 1 MiB) answers 413 in the path’s envelope', async () => {
    for (const e of endpoints) {
      const big = e.form
        ? `grant_type=${'a'.repeat(1024 * 1024 + 10)}`
        : JSON.stringify({ ...e.body(), pad: 'a'.repeat(1024 * 1024 + 10) });
      const res = await send(e, big);
      expectCleanError(res, e.path, { status: 413, code: isPlatformPath(e.path) ? undefined : 'PAYLOAD_TOO_LARGE' });
    }
  });

  it('deeply nested JSON (10,000 arrays, 10,000 objects) answers 4xx, and the api stays up', async () => {
    const arrays = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const objects = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    for (const e of endpoints) {
      for (const deep of [arrays, objects, `{"name":${arrays}}`, `{"params":${objects}}`]) {
        const res = await send(e, deep);
        expectNot5xx(res, e, 'deeply nested JSON');
        expect(res.status).toBeGreaterThanOrEqual(400);
      }
    }
    await request(url).get('/health/live').expect(200);
    await request(url).get('/v1/me').set(user.auth).expect(200);
  });

  it('invalid UTF-8 bytes never store replacement garbage and never 5xx', async () => {
    const prefix = Buffer.from('{"name":"bad ');
    const suffix = Buffer.from('"}');
    const sequences = [
      Buffer.from([0xff]),
      Buffer.from([0xc3, 0x28]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
      Buffer.from([0xe2, 0x82]),
    ];
    for (const e of endpoints) {
      for (const bytes of sequences) {
        expectNot5xx(await send(e, Buffer.concat([prefix, bytes, suffix])), e, `invalid UTF-8 ${bytes.toString('hex')}`);
      }
    }
    const list = await request(url).get('/v1/contacts?limit=100').set(user.auth).expect(200);
    const names = (list.body.contacts as Array<{ name: string }>).map((c) => c.name);
    // Stored names are either refused or clean text: no U+FFFD standing in for the bytes that were sent.
    for (const name of names) expect(name).not.toContain('\ufffd');
  });

  it('SQL-like and script strings are stored verbatim (or refused) and read back unchanged', async () => {
    const stored = HOSTILE_STRINGS.filter((s) => !s.includes('\u0000'));
    for (const s of stored) {
      const created = await request(url).post('/v1/contacts').set(user.auth).send({ name: s });
      if (created.status >= 400) {
        expectCleanError(created, '/v1/contacts', { status: 400 });
        continue;
      }
      expect(created.status).toBe(201);
      const read = await request(url).get(`/v1/contacts/${created.body.id}`).set(user.auth).expect(200);
      expect(read.body.name).toBe(s.trim());
      const sent = await request(url).post('/v1/messages').set(user.auth).send({ recipient_id: created.body.id, content: s });
      expect(sent.status).toBeLessThan(300);
    }
    const nul = await request(url).post('/v1/contacts').set(user.auth).send({ name: 'a\u0000b' });
    expectNot5xx(nul, endpoints[0], 'a NUL character');
    const soul = await request(url)
      .patch('/v1/soul')
      .set(user.auth)
      .send({ values: stored.map((s) => s.slice(0, 40)) });
    expectNot5xx(soul, endpoints[3], 'hostile soul values');
    if (soul.status === 200) {
      const read = await request(url).get('/v1/soul').set(user.auth).expect(200);
      expect(JSON.stringify(read.body)).toContain("'; DROP TABLE contacts; --");
    }
    // Every table is still there and the user still sees their data.
    await request(url).get(`/v1/contacts/${contactId}`).set(user.auth).expect(200);
    const history = await request(url).get(`/v1/messages?with=${contactId}`).set(user.auth).expect(200);
    expect(history.status).toBe(200);
    // Hostile strings in query parameters and ids are refused or not found, never executed.
    for (const s of stored) {
      const path = `/v1/contacts/${encodeURIComponent(s)}`;
      const res = await request(url).get(path).set(user.auth);
      expectCleanError(res, path, {});
      expect([400, 404]).toContain(res.status);
      const query = await request(url)
        .get(`/v1/contacts?q=${encodeURIComponent(s)}&cursor=${encodeURIComponent(s)}`)
        .set(user.auth);
      expect(query.status).toBeLessThan(500);
      if (query.status >= 400) expectCleanError(query, '/v1/contacts');
    }
  });
});
