import request from 'supertest';
import { ProbeModule } from '../support/probe.module';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';

const validBody = { name: 'x', count: 3, kind: 'a', inner: { to: 'someone@example.com' } };

describe('error envelopes and request ids', () => {
  let env: TestEnvironment;
  let url: string;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    ({ url } = await env.startApi({ imports: [ProbeModule] }));
  });
  afterAll(() => env.close());

  describe('user API envelope { error: { code, message, status } }', () => {
    it('answers 404 NOT_FOUND for an unknown route', async () => {
      const res = await request(url).get('/v1/nothing-here').expect(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), status: 404 } });
    });

    it('answers 400 BAD_REQUEST naming the field for a validation failure', async () => {
      const res = await request(url)
        .post('/v1/probe/echo')
        .send({ ...validBody, count: 99 })
        .expect(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
      expect(res.body.error.message).toContain('count');
    });

    it('names nested fields and missing fields', async () => {
      const res = await request(url)
        .post('/v1/probe/echo')
        .send({ ...validBody, inner: { to: 'not-an-email' } })
        .expect(400);
      expect(res.body.error.message).toContain('inner.to');
      const missing = await request(url).post('/v1/probe/echo').send({ count: 1, kind: 'a', inner: validBody.inner }).expect(400);
      expect(missing.body.error.message).toContain('name is required');
    });

    it('refuses unknown fields', async () => {
      const res = await request(url)
        .post('/v1/probe/echo')
        .send({ ...validBody, admin: true })
        .expect(400);
      expect(res.body.error.message).toContain('admin');
    });

    it('answers 400 BAD_REQUEST for a malformed JSON body, never 500', async () => {
      const res = await request(url).post('/v1/probe/echo').set('content-type', 'application/json').send('{"name": ').expect(400);
      expect(res.body).toEqual({ error: { code: 'BAD_REQUEST', message: 'Request body is not valid JSON', status: 400 } });
    });

    it('answers 401 UNAUTHORIZED from a thrown ApiError', async () => {
      const res = await request(url).get('/v1/probe/unauthorized').expect(401);
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Missing or invalid bearer token', status: 401 } });
    });

    it('answers 500 INTERNAL_ERROR without internals for an unexpected error', async () => {
      const res = await request(url).get('/v1/probe/crash').expect(500);
      expect(res.body).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred', status: 500 } });
      expect(JSON.stringify(res.body)).not.toContain('secret internal detail');
    });

    it('passes a valid body through', async () => {
      await request(url).post('/v1/probe/echo').send(validBody).expect(201, validBody);
    });
  });

  describe('provider platform envelope (RFC 9457 problem details)', () => {
    const problem = (code: string, status: number, instance: string) => ({
      type: `https://docs.example.com/developers/errors#${code}`,
      title: expect.any(String),
      status,
      detail: expect.any(String),
      instance,
    });

    it('answers 404 not_found as application/problem+json for an unknown provider route', async () => {
      const res = await request(url).get('/v1/providers/nothing-here?x=1').expect(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toEqual(problem('not_found', 404, '/v1/providers/nothing-here'));
    });

    it('answers missing_field with the field and its title for an absent required field', async () => {
      const { name: _name, ...withoutName } = validBody;
      const res = await request(url).post('/v1/providers/probe/echo').send(withoutName).expect(400);
      expect(res.body).toMatchObject({
        ...problem('missing_field', 400, '/v1/providers/probe/echo'),
        title: 'Missing Required Field',
        field: 'name',
      });
    });

    it('answers invalid_format with the field for a value outside the declared set', async () => {
      const res = await request(url)
        .post('/v1/providers/probe/echo')
        .send({ ...validBody, kind: 'z' })
        .expect(400);
      expect(res.body).toMatchObject({ ...problem('invalid_format', 400, '/v1/providers/probe/echo'), field: 'kind' });
    });

    it('answers 400 invalid_format for a malformed JSON body', async () => {
      const res = await request(url).post('/v1/providers/probe/echo').set('content-type', 'application/json').send('{oops').expect(400);
      expect(res.body).toEqual(problem('invalid_format', 400, '/v1/providers/probe/echo'));
    });

    it('answers 401 invalid_token on the operator API with a wrong token', async () => {
      const res = await request(url).post('/v1/operator/system/purge').set('authorization', 'Bearer wrong').expect(401);
      expect(res.body).toEqual(problem('invalid_token', 401, '/v1/operator/system/purge'));
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('answers 403 insufficient_scope naming the scope', async () => {
      const res = await request(url).get('/v1/providers/probe/forbidden').expect(403);
      expect(res.body).toEqual({ ...problem('insufficient_scope', 403, '/v1/providers/probe/forbidden'), title: 'Insufficient Scope' });
      expect(res.body.detail).toContain('packages:write');
    });

    it('answers 500 internal_error without internals', async () => {
      const res = await request(url).get('/v1/providers/probe/crash').expect(500);
      expect(res.body).toEqual(problem('internal_error', 500, '/v1/providers/probe/crash'));
      expect(JSON.stringify(res.body)).not.toContain('secret internal detail');
    });

    it('uses problem details for the OAuth token endpoint', async () => {
      const res = await request(url).post('/v1/auth/token').send({}).expect(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    });
  });

  describe('X-Service-Request-Id', () => {
    it('is minted as a req_ id on every response, errors included', async () => {
      const ok = await request(url).get('/health/live').expect(200);
      const missing = await request(url).get('/v1/nothing-here').expect(404);
      expect(ok.headers['x-service-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
      expect(missing.headers['x-service-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
      expect(ok.headers['x-service-request-id']).not.toBe(missing.headers['x-service-request-id']);
    });

    it("echoes the caller's well-formed id", async () => {
      const res = await request(url).get('/health/live').set('X-Service-Request-Id', 'req_callerChoseThis123').expect(200);
      expect(res.headers['x-service-request-id']).toBe('req_callerChoseThis123');
    });

    it('replaces a malformed id instead of echoing it', async () => {
      const res = await request(url).get('/health/live').set('X-Service-Request-Id', 'req_<script>').expect(200);
      expect(res.headers['x-service-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
    });
  });

  it('accepts the operator token and answers 202 with a job id', async () => {
    const res = await request(url).post('/v1/operator/system/purge').set('authorization', `Bearer ${OPERATOR_TOKEN}`).expect(202);
    expect(res.body).toEqual({ job_id: expect.stringMatching(/^purge-expired\./), status: 'queued' });
  });
});
