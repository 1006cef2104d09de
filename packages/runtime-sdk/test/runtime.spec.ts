import { CallContext, defineRuntime, degradedAnswer, pageOf, Runtime, RuntimeError, stateAnswer } from '../src';
import { AnswerBody, RuntimeTestKit } from '../src/testing';
import { bank, ledger } from './bank';
import { post, serve } from './serve';

/**
 * defineRuntime served by the node:http adapter on a loopback port, called as
 * the service calls it (docs/runtime-bridge.md), with tokens minted as the
 * service mints them (docs/runtime-auth.md).
 */
describe('defineRuntime over node:http', () => {
  let kit: RuntimeTestKit;
  let server: { url: string; close: () => Promise<void> };
  let runtime: Runtime<typeof bank>;
  let seen: CallContext[] = [];
  let balanceAnswer: () => unknown = () => ({ data: { available: 10, currency: 'EUR' } });
  const errors: unknown[] = [];

  const url = (name: string, op = 'execute') => `${server.url}/capabilities/${name}/${op}`;
  const call = async (name: string, mode: 'state' | 'history' | 'action', options: Parameters<RuntimeTestKit['headers']>[1] = {}) =>
    post(url(name), await kit.headers(mode, options), kit.body(name, mode, options));

  beforeAll(async () => {
    kit = await RuntimeTestKit.create();
    runtime = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      onError: (error) => errors.push(error),
      handlers: {
        balance: async (params, context) => {
          seen.push(context);
          return balanceAnswer() as { data: { available: number; currency: string } };
        },
        transfer: async (input) => ({ result: { transferId: `tr_${input.amount}`, state: 'completed' }, message: 'Sent.' }),
        transactions: async (params) => pageOf(ledger, params),
        ticker: (stream) => stream.send({ rate: 1 }),
      },
    });
    server = await serve(runtime.listener());
  });
  afterAll(() => server.close());
  beforeEach(() => {
    seen = [];
    errors.length = 0;
    balanceAnswer = () => ({ data: { available: 10, currency: 'EUR' } });
  });

  describe('state', () => {
    it('answers the state envelope, ttl from refreshInterval, and hands the handler the verified call', async () => {
      const res = await call('balance', 'state', {
        params: { account: 'checking' },
        scopes: ['accounts:read', 'x:y'],
        requestId: 'req_abc',
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        status: 'ok',
        data: { available: 10, currency: 'EUR' },
        ttl: 120,
        metadata: { source: 'acme-bank', fetchedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) },
      });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({
        userId: 'usr_testkit0000000000000000',
        installId: 'inst_testkit000000000000000',
        scopes: ['accounts:read', 'x:y'],
        requestId: 'req_abc',
        livemode: true,
        capability: 'balance',
        mode: 'state',
        locale: 'en',
        timezone: 'UTC',
      });
    });

    it('passes test traffic on as livemode false', async () => {
      await call('balance', 'state', { params: { account: 'savings' }, livemode: false }).then((r) => expect(r.status).toBe(200));
      expect(seen[0].livemode).toBe(false);
    });

    it('refuses params that fail the schema with 400 INVALID_PARAMS naming the field, before the handler runs', async () => {
      const wrong = await call('balance', 'state', { params: { account: 'brokerage' } });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ status: 'error', error: { code: 'INVALID_PARAMS', retryable: false, field: 'params.account' } });
      expect(wrong.body.error?.message).toContain('params.account');
      const missing = await call('balance', 'state', { params: {} });
      expect(missing.body.error).toMatchObject({ code: 'INVALID_PARAMS', field: 'params.account' });
      const extra = await call('balance', 'state', { params: { account: 'checking', iban: 'x' } });
      expect(extra.body.error).toMatchObject({ code: 'INVALID_PARAMS', field: 'params.iban' });
      expect(seen).toHaveLength(0);
    });

    it('refuses a body that is not a JSON object', async () => {
      const res = await post(url('balance'), await kit.headers('state'), '[1, 2');
      expect(res).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', field: 'body' } } });
    });

    it('in development, answers a wrong answer with a loud INTERNAL_ERROR naming the field and reports it', async () => {
      balanceAnswer = () => ({ data: { available: 'ten', currency: 'EUR' } });
      const res = await call('balance', 'state', { params: { account: 'checking' } });
      expect(res.status).toBe(500);
      expect(res.body.error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: false });
      expect(res.body.error?.message).toContain('data.available');
      expect(errors).toHaveLength(1);
    });

    it('sends handler-built envelopes and degraded answers as they are', async () => {
      balanceAnswer = () => stateAnswer({ available: 1, currency: 'USD' }, { ttl: 5, source: 'core-banking' });
      expect((await call('balance', 'state', { params: { account: 'checking' } })).body).toMatchObject({
        ttl: 5,
        metadata: { source: 'core-banking' },
      });
      balanceAnswer = () => degradedAnswer({ type: 'partial', detail: 'currency unknown' }, { data: { available: 1 } });
      expect((await call('balance', 'state', { params: { account: 'checking' } })).body).toEqual({
        status: 'degraded',
        error: { type: 'partial', detail: 'currency unknown', retryable: true },
        data: { available: 1 },
      });
    });

    it('answers a RuntimeError with its envelope and status, and hides the message of any other error', async () => {
      balanceAnswer = () => {
        throw new RuntimeError('UPSTREAM_UNAVAILABLE', 'the bank is down', { retryAfter: 29.2 });
      };
      const down = await call('balance', 'state', { params: { account: 'checking' } });
      expect(down).toMatchObject({
        status: 503,
        body: { status: 'error', error: { code: 'UPSTREAM_UNAVAILABLE', message: 'the bank is down', retryable: true, retryAfter: 30 } },
      });
      balanceAnswer = () => {
        throw new Error('password=hunter2 at db.internal');
      };
      const crashed = await call('balance', 'state', { params: { account: 'checking' } });
      expect(crashed.status).toBe(500);
      expect(crashed.body.error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true });
      expect(JSON.stringify(crashed.body)).not.toContain('hunter2');
      expect(errors).toHaveLength(1);
    });
  });

  describe('history', () => {
    it('pages with opaque cursors until hasMore is false', async () => {
      const first = await call('transactions', 'history', { params: { account: 'checking', limit: 10, direction: 'backward' } });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ status: 'ok', totalCount: 25, cursor: { hasMore: true, next: expect.any(String) } });
      const idsOf = (items: AnswerBody['items']) => (items ?? []).map((i) => String(i.id));
      const ids = idsOf(first.body.items);
      expect(ids[0]).toBe('tx_025');
      let cursor = first.body.cursor!;
      while (cursor.hasMore) {
        const next = await call('transactions', 'history', { params: { account: 'checking', limit: 10, cursor: cursor.next! } });
        ids.push(...idsOf(next.body.items));
        cursor = next.body.cursor!;
      }
      expect(ids).toEqual(ledger.map((t) => t.id));
      expect(cursor).toEqual({ hasMore: false, next: null });
    });

    it('refuses a limit that is not a positive integer, and a cursor it never issued, as INVALID_PARAMS', async () => {
      const limit = await call('transactions', 'history', { params: { account: 'checking', limit: 'ten' } });
      expect(limit).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', field: 'params.limit' } } });
      const cursor = await call('transactions', 'history', { params: { account: 'checking', cursor: 'not a cursor!' } });
      expect(cursor).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', field: 'params.cursor' } } });
      const own = await call('transactions', 'history', { params: { limit: 5 } });
      expect(own.body.error).toMatchObject({ code: 'INVALID_PARAMS', field: 'params.account' });
    });
  });

  describe('routes', () => {
    it('answers 404 NOT_FOUND for an unknown capability, a webhook capability and the wrong operation', async () => {
      for (const [name, op] of [
        ['conformance_unknown_1', 'execute'],
        ['meeting_updates', 'execute'],
        ['balance', 'stream'],
        ['ticker', 'execute'],
      ]) {
        const res = await fetch(url(name, op), {
          method: op === 'stream' ? 'GET' : 'POST',
          headers: await kit.headers('state'),
          body: op === 'stream' ? undefined : JSON.stringify(kit.body(name, 'state')),
        });
        expect([name, res.status]).toEqual([name, 404]);
        expect(await res.json()).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND', retryable: false } });
      }
    });

    it('refuses to start without a handler for every capability the service calls, or with a handler for none', () => {
      const options = { descriptor: bank, serviceUrl: kit.serviceUrl, appId: kit.appId, keys: kit.jwks };
      const noop = async () => ({ data: {} });
      expect(() =>
        // @ts-expect-error: the handler of `ticker` is missing
        defineRuntime({ ...options, handlers: { balance: noop, transfer: noop, transactions: noop } }),
      ).toThrow('capability ticker (realtime) has no handler');
      expect(() =>
        defineRuntime({
          ...options,
          // @ts-expect-error: `balances` is no capability
          handlers: { balance: noop, transfer: noop, transactions: noop, ticker: noop, balances: noop },
        }),
      ).toThrow('handler balances has no capability');
    });
  });

  describe('runtime tokens (docs/runtime-auth.md)', () => {
    const refusedWith = async (code: 'AUTH_INVALID' | 'AUTH_EXPIRED', headers: Record<string, string>) => {
      const res = await post(url('balance'), headers, kit.body('balance', 'state', { params: { account: 'checking' } }));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: 'error', error: { code, retryable: code === 'AUTH_EXPIRED' } });
      return res.body.error!.message;
    };
    const hourAgo = () => new Date(Date.now() - 3600_000);

    it('refuses a call without a bearer token', async () => {
      await refusedWith('AUTH_INVALID', await kit.headers('state', { token: null }));
    });

    it('refuses a forged token: same header and claims, another key', async () => {
      await refusedWith(
        'AUTH_INVALID',
        await kit.headers('state', { token: await kit.forgedToken({ requestId: 'req_1' }), requestId: 'req_1' }),
      );
    });

    it('refuses a token for another app (another aud)', async () => {
      const message = await refusedWith(
        'AUTH_INVALID',
        await kit.headers('state', { token: await kit.token({ requestId: 'req_2', audience: 'app_other' }), requestId: 'req_2' }),
      );
      expect(message).toContain('aud');
    });

    it('refuses an expired token as AUTH_EXPIRED, but an expired forged one as AUTH_INVALID', async () => {
      const expired = await kit.token({ requestId: 'req_3', issuedAt: hourAgo() });
      await refusedWith('AUTH_EXPIRED', await kit.headers('state', { token: expired, requestId: 'req_3' }));
      const forged = await kit.forgedToken({ requestId: 'req_3', issuedAt: hourAgo() });
      await refusedWith('AUTH_INVALID', await kit.headers('state', { token: forged, requestId: 'req_3' }));
    });

    it('accepts a token that expired within the 30 s clock skew', async () => {
      const skewed = await kit.token({ requestId: 'req_4', issuedAt: new Date(Date.now() - 310_000) });
      const res = await post(
        url('balance'),
        await kit.headers('state', { token: skewed, requestId: 'req_4' }),
        kit.body('balance', 'state', { params: { account: 'checking' } }),
      );
      expect(res.status).toBe(200);
    });

    it('refuses a rid that is not the X-Service-Request-Id, and a livemode that is not the header', async () => {
      const token = await kit.token({ requestId: 'req_5', livemode: true });
      expect(await refusedWith('AUTH_INVALID', await kit.headers('state', { token, requestId: 'req_6' }))).toContain('rid');
      expect(await refusedWith('AUTH_INVALID', await kit.headers('state', { token, requestId: 'req_5', livemode: false }))).toContain(
        'livemode',
      );
    });

    it('refuses another issuer, another typ, a missing iid and a user header that is not the token’s', async () => {
      const headers = async (options: Parameters<RuntimeTestKit['token']>[0]) =>
        kit.headers('state', { token: await kit.token({ requestId: 'req_7', ...options }), requestId: 'req_7' });
      await refusedWith('AUTH_INVALID', await headers({ issuer: 'https://evil.example' }));
      await refusedWith('AUTH_INVALID', await headers({ typ: 'JWT' }));
      await refusedWith('AUTH_INVALID', await headers({ claims: { iid: undefined } }));
      await refusedWith('AUTH_INVALID', { ...(await headers({})), 'x-service-user-id': 'usr_someoneElse' });
      expect(seen).toHaveLength(0);
    });

    it('fetches the service JWKS over HTTP once, caches it, and verifies with it', async () => {
      const served = await kit.serveJwks();
      try {
        const remote = defineRuntime({
          descriptor: bank,
          serviceUrl: served.serviceUrl,
          appId: served.appId,
          handlers: {
            balance: async () => ({ data: { available: 1, currency: 'EUR' } }),
            transfer: async () => ({ result: { transferId: 't', state: 'completed' as const }, message: 'ok' }),
            transactions: async () => ({ items: [] }),
            ticker: () => undefined,
          },
        });
        for (let i = 0; i < 3; i += 1) {
          expect((await served.execute(remote, 'balance', { params: { account: 'checking' } })).status).toBe(200);
        }
        expect(served.jwksFetches).toBe(1);
        const forged = await served.execute(remote, 'balance', { params: { account: 'checking' }, token: await served.forgedToken() });
        expect(forged.body.error?.code).toBe('AUTH_INVALID');
        // The kit's own issuer is refused by a runtime that trusts the served one.
        const elsewhere = await served.execute(remote, 'balance', { params: { account: 'checking' }, token: await kit.token() });
        expect(elsewhere.body.error?.code).toBe('AUTH_INVALID');
      } finally {
        await served.close();
      }
    });
  });
});
