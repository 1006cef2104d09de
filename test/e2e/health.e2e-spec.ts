import request from 'supertest';
import { TestEnvironment } from '../support/harness';

describe('health and API reference', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await TestEnvironment.create();
  });
  afterAll(() => env.close());

  it('reports live and ready when PostgreSQL and Redis answer', async () => {
    const { url } = await env.startApi();
    await request(url).get('/health/live').expect(200, { status: 'ok' });
    await request(url)
      .get('/health/ready')
      .expect(200, { status: 'ok', checks: { database: 'up', redis: 'up' } });
  });

  it('answers 503 on readiness when Redis is unreachable, and stays live', async () => {
    // Port 1 on loopback: nothing listens there, so every Redis call fails at once.
    const { url } = await env.startApi({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    await request(url)
      .get('/health/ready')
      .expect(503, { status: 'unavailable', checks: { database: 'up', redis: 'down' } });
    await request(url).get('/health/live').expect(200);
  });

  it('serves the OpenAPI document and its UI at /docs', async () => {
    const { url } = await env.startApi();
    const spec = await request(url).get('/docs/openapi.json').expect(200);
    expect(spec.body.openapi).toMatch(/^3\./);
    expect(Object.keys(spec.body.paths)).toEqual(expect.arrayContaining(['/health/ready', '/v1/operator/system/purge']));
    const ui = await request(url).get('/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger');
  });
});
