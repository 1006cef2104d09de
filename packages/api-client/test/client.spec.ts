import { ApiFailure, createApiClient, ok, paginate, type Schemas } from '@soul-service/api-client';
import { ScriptedServer } from './scripted-server';

type Execution = Schemas['ExecutionSummaryDto'];

describe('api-client against a real HTTP server', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await ScriptedServer.start();
  });
  afterAll(() => server.close());

  /** Fast backoff so the tests wait only where the server names a `Retry-After`. */
  const client = (options: Parameters<typeof createApiClient>[0] = {}) =>
    createApiClient({ baseUrl: server.url, token: () => 'tok_1', retry: { baseDelayMs: 1 }, ...options });
  const packageBody = { name: 'x' } as unknown as Schemas['CreatePackageDto'];

  describe('retries', () => {
    it('waits the Retry-After a 429 names before trying again, then answers the retry', async () => {
      server.answer((_, i) =>
        i === 0
          ? { status: 429, headers: { 'retry-after': '1' }, body: { error: { code: 'RATE_LIMITED' } } }
          : { status: 200, body: { apps: [] } },
      );
      const started = Date.now();
      const answer = await ok(client().GET('/v1/providers/apps'));
      expect(answer).toEqual({ apps: [] });
      expect(server.received).toHaveLength(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    });

    it('accepts Retry-After as an HTTP date', async () => {
      const soon = new Date(Date.now() + 1500).toUTCString();
      server.answer((_, i) => (i === 0 ? { status: 503, headers: { 'retry-after': soon } } : { status: 200, body: { apps: [] } }));
      const started = Date.now();
      await ok(client().GET('/v1/providers/apps'));
      expect(server.received).toHaveLength(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    });

    it('does not retry sooner than asked: a Retry-After over the cap is answered at once, with its wait', async () => {
      server.answer(() => ({
        status: 429,
        headers: { 'retry-after': '120', 'x-service-request-id': 'req_capped0001' },
        body: { error: { code: 'RATE_LIMITED', message: 'slow down', status: 429 } },
      }));
      const started = Date.now();
      const failure = await ok(client({ retry: { maxDelayMs: 5_000 } }).GET('/v1/providers/apps')).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(server.received).toHaveLength(1);
      expect(failure).toBeInstanceOf(ApiFailure);
      expect(failure).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfterSeconds: 120, requestId: 'req_capped0001' });
    });

    it('gives up after the retries allowed and answers the last refusal', async () => {
      server.answer(() => ({ status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'down', status: 503 } } }));
      const failure = await ok(client({ retry: { retries: 2, baseDelayMs: 1 } }).GET('/v1/providers/apps')).catch((e: unknown) => e);
      expect(server.received).toHaveLength(3);
      expect(failure).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    });

    it('does not repeat other failures (a 500, a 409)', async () => {
      server.answer(() => ({ status: 500, body: { error: { code: 'INTERNAL_ERROR', message: 'boom', status: 500 } } }));
      await expect(ok(client().GET('/v1/providers/apps'))).rejects.toMatchObject({ status: 500 });
      expect(server.received).toHaveLength(1);
    });

    it('repeats a read that got no answer, but not a POST without an idempotency key', async () => {
      server.answer((_, i) => (i === 0 ? 'drop' : { status: 200, body: { apps: [] } }));
      await ok(client().GET('/v1/providers/apps'));
      expect(server.received).toHaveLength(2);

      server.answer(() => 'drop');
      const failure = await ok(client().POST('/v1/providers/packages', { body: packageBody })).catch((e: unknown) => e);
      expect(server.received).toHaveLength(1);
      expect(failure).toMatchObject({ status: 0, code: 'network_error', requestId: null });
    });

    it('sends every call once with retry: false', async () => {
      server.answer(() => ({ status: 429, headers: { 'retry-after': '0' } }));
      await expect(ok(client({ retry: false }).GET('/v1/providers/apps'))).rejects.toMatchObject({ status: 429 });
      expect(server.received).toHaveLength(1);
    });
  });

  describe('idempotency keys', () => {
    const send = (api = client()) => ok(api.POST('/v1/messages', { body: { recipient_id: 'con_1', content: 'hi' } as never }));

    it('sends one key per call on operations that take one, the same on each retry of it', async () => {
      server.answer((_, i) => (i < 2 ? { status: 503, headers: { 'retry-after': '0' } } : { status: 201, body: { id: 'msg_1' } }));
      await send();
      const keys = server.received.map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Set(keys).size).toBe(1);
      // The body is sent again whole on every attempt.
      expect(server.received.map((r) => JSON.parse(r.body) as unknown)).toEqual(Array(3).fill({ recipient_id: 'con_1', content: 'hi' }));

      server.answer(() => ({ status: 201, body: { id: 'msg_2' } }));
      await send();
      expect(server.received[0].headers['idempotency-key']).not.toBe(keys[0]);
    });

    it('repeats a call with a key that got no answer, with the same key', async () => {
      server.answer((_, i) => (i === 0 ? 'drop' : { status: 201, body: { id: 'msg_1' } }));
      await send();
      expect(server.received).toHaveLength(2);
      expect(server.received[1].headers['idempotency-key']).toBe(server.received[0].headers['idempotency-key']);
    });

    it("keeps the caller's own key, and sends none where the API takes none", async () => {
      server.answer(() => ({ status: 201, body: { id: 'msg_1' } }));
      await ok(
        client().POST('/v1/messages', {
          body: { recipient_id: 'con_1', content: 'hi' } as never,
          headers: { 'idempotency-key': 'mine-1' },
        }),
      );
      expect(server.received[0].headers['idempotency-key']).toBe('mine-1');
      await ok(client().POST('/v1/providers/packages', { body: packageBody }));
      expect(server.received[1].headers['idempotency-key']).toBeUndefined();
      expect(server.received[1].headers.authorization).toBe('Bearer tok_1');
    });
  });

  describe('cursor pagination', () => {
    const execution = (n: number) => ({ request_id: `req_${n}` }) as Execution;

    it('walks every page through next_cursor, fetching a page only when the one before is used up', async () => {
      const pages: Record<string, { executions: Execution[]; next_cursor: string | null }> = {
        '': { executions: [execution(1), execution(2)], next_cursor: 'c2' },
        c2: { executions: [execution(3)], next_cursor: 'c3' },
        c3: { executions: [execution(4)], next_cursor: null },
      };
      server.answer((r) => ({ status: 200, body: pages[new URL(r.path, server.url).searchParams.get('cursor') ?? ''] }));
      const api = client();
      const items = paginate(
        (cursor) => ok(api.GET('/v1/providers/executions', { params: { query: { capability: 'balance', cursor } } })),
        (page) => page.executions,
      );
      const first = await items.next();
      expect(first.value).toEqual(execution(1));
      expect(server.received).toHaveLength(1);
      const rest: string[] = [];
      for await (const e of items) rest.push(e.request_id);
      expect(rest).toEqual(['req_2', 'req_3', 'req_4']);
      expect(server.received.map((r) => r.path)).toEqual([
        '/v1/providers/executions?capability=balance',
        '/v1/providers/executions?capability=balance&cursor=c2',
        '/v1/providers/executions?capability=balance&cursor=c3',
      ]);
    });

    it('stops when a cursor comes back again instead of looping', async () => {
      server.answer(() => ({ status: 200, body: { executions: [execution(1)], next_cursor: 'same' } }));
      const api = client();
      const ids: string[] = [];
      for await (const e of paginate(
        (cursor) => ok(api.GET('/v1/providers/executions', { params: { query: { cursor } } })),
        (page) => page.executions,
      )) {
        ids.push(e.request_id);
      }
      expect(ids).toEqual(['req_1', 'req_1']);
      expect(server.received).toHaveLength(2);
    });
  });

  describe('both error envelopes become one ApiFailure', () => {
    it('reads the user API envelope with the request id', async () => {
      server.answer(() => ({
        status: 404,
        headers: { 'x-service-request-id': 'req_user000001' },
        body: { error: { code: 'NOT_FOUND', message: 'Contact not found', status: 404 } },
      }));
      const failure = (await ok(client().GET('/v1/contacts/{id}', { params: { path: { id: 'con_x' } } })).catch(
        (e: unknown) => e,
      )) as ApiFailure;
      expect(failure).toBeInstanceOf(ApiFailure);
      expect(failure).toMatchObject({
        status: 404,
        code: 'NOT_FOUND',
        title: 'NOT_FOUND',
        message: 'Contact not found',
        fieldErrors: [],
        requestId: 'req_user000001',
      });
      expect(failure.detail).toBe('Contact not found');
    });

    it('reads a problem: the code from the type, title, detail, every field error and the request id', async () => {
      const problem = {
        type: 'https://docs.example.com/developers/errors#invalid_format',
        title: 'Invalid format',
        status: 400,
        detail: 'The descriptor has 2 errors',
        instance: '/v1/providers/packages',
        errors: [
          { field: 'capabilities[0].schema', schema_path: '#/$defs/capability', message: 'is required', code: 'missing_field' },
          { field: 'slug', message: 'must be lowercase', code: 'invalid_format' },
        ],
      };
      server.answer(() => ({
        status: 400,
        headers: { 'content-type': 'application/problem+json', 'x-service-request-id': 'req_problem0001' },
        body: problem,
      }));
      const failure = (await ok(client().POST('/v1/providers/packages', { body: packageBody })).catch((e: unknown) => e)) as ApiFailure;
      expect(failure).toMatchObject({
        status: 400,
        code: 'invalid_format',
        title: 'Invalid format',
        message: 'The descriptor has 2 errors',
        requestId: 'req_problem0001',
      });
      expect(failure.fieldErrors).toEqual([
        { field: 'capabilities[0].schema', schemaPath: '#/$defs/capability', message: 'is required', code: 'missing_field' },
        { field: 'slug', message: 'must be lowercase', code: 'invalid_format' },
      ]);
      expect(failure.body).toEqual(problem);
      expect(JSON.parse(JSON.stringify(failure))).toMatchObject({
        status: 400,
        code: 'invalid_format',
        request_id: 'req_problem0001',
        field_errors: expect.any(Array) as unknown,
      });
    });

    it("turns a problem's single field into a field error", async () => {
      server.answer(() => ({
        status: 401,
        body: {
          type: 'https://docs.example.com/developers/errors#mfa_required',
          title: 'MFA required',
          status: 401,
          detail: 'The two-factor code is not correct',
          field: 'totp',
        },
      }));
      let unauthorized = 0;
      const api = client({ onUnauthorized: () => (unauthorized += 1) });
      const failure = (await ok(api.POST('/v1/providers/auth/login', { body: { email: 'a@b.c', password: 'x' } })).catch(
        (e: unknown) => e,
      )) as ApiFailure;
      expect(failure).toMatchObject({
        status: 401,
        code: 'mfa_required',
        fieldErrors: [{ field: 'totp', message: 'The two-factor code is not correct' }],
      });
      expect(unauthorized).toBe(1);
    });

    it('keeps a body that is neither envelope', async () => {
      server.answer(() => ({ status: 502, body: 'bad gateway' }));
      const failure = (await ok(client().GET('/v1/providers/apps')).catch((e: unknown) => e)) as ApiFailure;
      expect(failure).toMatchObject({ status: 502, code: '502', body: 'bad gateway' });
    });
  });
});
