import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import request from 'supertest';
import { CacheFence, FENCE_TIMEOUT_MS } from '../../src/infra/realtime/cache-fence';
import { SessionCache, USER_AUTH_CHANNEL } from '../../src/modules/access/session-cache';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { login } from '../support/users';

/**
 * A revocation answers only once every api instance has dropped what it
 * revoked (CacheFence): "immediate across instances" as the client sees it,
 * not "within the notification's delivery". Without the fence, a frame sent on
 * instance A just after a logout on instance B was answered when A's
 * notification came a moment late (seen in CI).
 */
describe('revocations wait for every instance (cache fence)', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let apiA: { app: NestFastifyApplication; url: string };
  let apiB: { app: NestFastifyApplication; url: string };
  const seenByA: string[] = [];
  let people = 0;

  const person = () => {
    people += 1;
    return { sub: `uid-fence-${people}`, name: `Fenced ${people}`, email: `fenced${people}@example.com` };
  };

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    apiA = await env.startApi();
    apiB = await env.startApi();
    apiA.app.get(SessionCache).watch((userId) => {
      if (userId) seenByA.push(userId);
    });
  });

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  it('a logout on instance B answers after instance A has dropped the session, and A refuses it at once', async () => {
    const alice = await login(apiA.url, idp, person());
    await request(apiA.url).get('/v1/me').set(alice.auth).expect(200);

    await request(apiB.url).post('/v1/auth/logout').set(alice.auth).expect(204);
    expect(seenByA).toContain(alice.id);
    await request(apiA.url).get('/v1/me').set(alice.auth).expect(401);
  });

  it('sign out everywhere on B: every session of the user is already dropped on A when B answers', async () => {
    const who = person();
    const first = await login(apiA.url, idp, who);
    const second = await login(apiA.url, idp, who);
    await request(apiA.url).get('/v1/me').set(second.auth).expect(200);
    seenByA.length = 0;

    await request(apiB.url).post('/v1/sessions/revoke-all').set(first.auth).expect(200);
    expect(seenByA).toContain(first.id);
    await request(apiA.url).get('/v1/me').set(second.auth).expect(401);
  });

  it('waits for a slow instance: the logout answers only after its answer, which follows the revocation in commit order', async () => {
    // A member as another process would be: its own LISTEN connection, answering each fence 300 ms late.
    const fence = apiA.app.get(CacheFence);
    const seen: string[] = [];
    const listener = new Client({ connectionString: env.env.DATABASE_URL });
    await listener.connect();
    await listener.query(`LISTEN ${USER_AUTH_CHANNEL}`);
    const member = fence.join(USER_AUTH_CHANNEL);
    listener.on('notification', ({ payload = '' }) => {
      seen.push(payload.startsWith('!fence ') ? 'fence' : payload);
      if (payload.startsWith('!fence ')) setTimeout(() => fence.answer(payload, member), 300);
    });
    try {
      const dave = await login(apiA.url, idp, person());
      seen.length = 0;
      const started = Date.now();
      await request(apiB.url).post('/v1/auth/logout').set(dave.auth).expect(204);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(seen.slice(0, 2)).toEqual([dave.id, 'fence']);
    } finally {
      fence.leave(member);
      await listener.end();
    }
  });

  it('a listed instance that never answers (died without leaving) delays a revocation by the fence timeout only', async () => {
    const fence = apiA.app.get(CacheFence);
    const silent = fence.join(USER_AUTH_CHANNEL);
    try {
      const bob = await login(apiA.url, idp, person());
      const started = Date.now();
      await request(apiB.url).post('/v1/auth/logout').set(bob.auth).expect(204);
      expect(Date.now() - started).toBeGreaterThanOrEqual(FENCE_TIMEOUT_MS - 50);
      await request(apiA.url).get('/v1/me').set(bob.auth).expect(401);
    } finally {
      fence.leave(silent);
    }
  });

  it('once the silent member has left, a revocation waits only for the live instances', async () => {
    const carol = await login(apiA.url, idp, person());
    seenByA.length = 0;
    await request(apiB.url).post('/v1/auth/logout').set(carol.auth).expect(204);
    expect(seenByA).toContain(carol.id);
  });
});
