import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SessionCache } from '../../src/modules/access/session-cache';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

const sessionOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

describe('session control: GET /v1/sessions, revoke one, sign out everywhere', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let apiA: { app: NestFastifyApplication; url: string };
  let dataSource: DataSource;
  const clients: GatewayClient[] = [];
  let people = 0;

  /** Signs `who` in on `url` from a client with this User-Agent: each sign-in opens a session of the same user. */
  async function signIn(
    url: string,
    who: { sub: string; email?: string },
    userAgent?: string,
  ): Promise<LoggedInUser & { sessionId: string }> {
    const call = request(url).post('/v1/auth/login');
    if (userAgent) void call.set('user-agent', userAgent);
    const res = await call.send({ firebase_token: await idp.token({ ...who, name: 'Sam' }) }).expect(200);
    const token = res.body.token as string;
    return { id: res.body.user.id, token, auth: { authorization: `Bearer ${token}` }, sessionId: sessionOf(token) };
  }

  function newPerson(): { sub: string; email: string } {
    people += 1;
    return { sub: `uid-sessions-${people}`, email: `person${people}.sessions@example.com` };
  }

  async function socket(url: string, token: string): Promise<GatewayClient> {
    const client = await GatewayClient.open(url, token);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    apiA = await env.startApi();
    dataSource = apiA.app.get(DataSource);
  });

  afterEach(() => GatewayClient.terminateAll(clients));

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  it('lists the live sessions newest first, with the client that signed in, and marks the calling one current', async () => {
    const who = newPerson();
    const first = await signIn(apiA.url, who, FIREFOX);
    const second = await signIn(apiA.url, who, SAFARI_IPHONE);
    const third = await signIn(apiA.url, who);
    await request(apiA.url).post('/v1/auth/logout').set(third.auth).expect(204);
    const stranger = await signIn(apiA.url, newPerson(), FIREFOX);

    const res = await request(apiA.url).get('/v1/sessions').set(second.auth).expect(200);

    expect(res.body.next_cursor).toBeNull();
    expect(res.body.sessions.map((s: { id: string }) => s.id)).toEqual([second.sessionId, first.sessionId]);
    expect(res.body.sessions[0]).toEqual({
      id: second.sessionId,
      created_at: expect.any(String),
      last_used_at: expect.any(String),
      expires_at: expect.any(String),
      client: { description: 'Safari on iOS', user_agent: SAFARI_IPHONE, ip_address: '127.0.0.1' },
      current: true,
    });
    expect(res.body.sessions[1]).toMatchObject({ current: false, client: { description: 'Firefox on Linux', user_agent: FIREFOX } });
    expect(Date.parse(res.body.sessions[0].expires_at) - Date.parse(res.body.sessions[0].created_at)).toBeGreaterThan(3595_000);
    expect(JSON.stringify(res.body)).not.toContain(stranger.sessionId);
  });

  it('pages with limit and next_cursor without skipping or repeating, and refuses a cursor it did not issue with 400', async () => {
    const who = newPerson();
    const opened: string[] = [];
    for (let i = 0; i < 5; i++) opened.push((await signIn(apiA.url, who)).sessionId);
    const caller = await signIn(apiA.url, who);
    opened.push(caller.sessionId);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await request(apiA.url)
        .get('/v1/sessions')
        .query(cursor ? { limit: 2, cursor } : { limit: 2 })
        .set(caller.auth)
        .expect(200);
      expect(page.body.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.sessions.map((s: { id: string }) => s.id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    expect(seen).toEqual([...opened].reverse());

    for (const bad of ['not-a-cursor', Buffer.from('2026-01-01T00:00:00.000000Z msg_x').toString('base64url'), 'x'.repeat(300)]) {
      const refused = await request(apiA.url).get('/v1/sessions').query({ cursor: bad }).set(caller.auth).expect(400);
      expect(refused.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    }
    await request(apiA.url).get('/v1/sessions').query({ limit: 0 }).set(caller.auth).expect(400);
    await request(apiA.url).get('/v1/sessions').query({ limit: 101 }).set(caller.auth).expect(400);
  });

  it('moves last_used_at when a session is used after more than a minute, and writes nothing within the minute', async () => {
    const who = newPerson();
    const session = await signIn(apiA.url, who);
    const lastUsed = async () =>
      ((await dataSource.query(`SELECT last_used_at FROM sessions WHERE id = $1`, [session.sessionId]))[0].last_used_at as Date).getTime();

    // The next request checks the session again (as it does every 10 s, or after a change), and that check records the use.
    const recheck = () => apiA.app.get(SessionCache).forgetUser(session.id);
    await dataSource.query(`UPDATE sessions SET last_used_at = now() - interval '5 minutes' WHERE id = $1`, [session.sessionId]);
    recheck();
    await request(apiA.url).get('/v1/me').set(session.auth).expect(200);
    expect(Math.abs((await lastUsed()) - Date.now())).toBeLessThan(5_000);

    await dataSource.query(`UPDATE sessions SET last_used_at = now() - interval '30 seconds' WHERE id = $1`, [session.sessionId]);
    const thirtySecondsAgo = await lastUsed();
    recheck();
    await request(apiA.url).get('/v1/me').set(session.auth).expect(200);
    expect(await lastUsed()).toBe(thirtySecondsAgo);

    const listed = await request(apiA.url).get('/v1/sessions').set(session.auth).expect(200);
    expect(Date.parse(listed.body.sessions[0].last_used_at)).toBe(thirtySecondsAgo);
  });

  it('revokes one session: its token is refused at once, it leaves the list, and a second revoke is 404', async () => {
    const who = newPerson();
    const kept = await signIn(apiA.url, who);
    const revoked = await signIn(apiA.url, who);
    // The instance has checked (and remembers) the session about to be revoked.
    await request(apiA.url).get('/v1/me').set(revoked.auth).expect(200);

    await request(apiA.url).delete(`/v1/sessions/${revoked.sessionId}`).set(kept.auth).expect(204);

    await request(apiA.url).get('/v1/me').set(revoked.auth).expect(401);
    await request(apiA.url).get('/v1/me').set(kept.auth).expect(200);
    const listed = await request(apiA.url).get('/v1/sessions').set(kept.auth).expect(200);
    expect(listed.body.sessions.map((s: { id: string }) => s.id)).toEqual([kept.sessionId]);
    const again = await request(apiA.url).delete(`/v1/sessions/${revoked.sessionId}`).set(kept.auth).expect(404);
    expect(again.body.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it("answers 404 for another user's session, an unknown id and a malformed id, and leaves the other user's session live", async () => {
    const mine = await signIn(apiA.url, newPerson());
    const theirs = await signIn(apiA.url, newPerson());

    await request(apiA.url).delete(`/v1/sessions/${theirs.sessionId}`).set(mine.auth).expect(404);
    await request(apiA.url).delete('/v1/sessions/ses_0000000000000000000000').set(mine.auth).expect(404);
    await request(apiA.url)
      .delete(`/v1/sessions/${encodeURIComponent("' OR 1=1 --")}`)
      .set(mine.auth)
      .expect(404);

    await request(apiA.url).get('/v1/me').set(theirs.auth).expect(200);
    const [row] = await dataSource.query(`SELECT revoked_at FROM sessions WHERE id = $1`, [theirs.sessionId]);
    expect(row.revoked_at).toBeNull();
  });

  it('lets a session revoke itself (as logout does)', async () => {
    const self = await signIn(apiA.url, newPerson());
    await request(apiA.url).delete(`/v1/sessions/${self.sessionId}`).set(self.auth).expect(204);
    await request(apiA.url).get('/v1/sessions').set(self.auth).expect(401);
  });

  it('signs out everywhere but the calling session with ?keep_current=true, answering how many were revoked', async () => {
    const who = newPerson();
    const others = [await signIn(apiA.url, who), await signIn(apiA.url, who), await signIn(apiA.url, who)];
    const caller = await signIn(apiA.url, who);
    const stranger = await signIn(apiA.url, newPerson());

    const res = await request(apiA.url).post('/v1/sessions/revoke-all').query({ keep_current: 'true' }).set(caller.auth).expect(200);

    expect(res.body).toEqual({ revoked: 3, current_session_kept: true });
    for (const other of others) await request(apiA.url).get('/v1/me').set(other.auth).expect(401);
    await request(apiA.url).get('/v1/me').set(caller.auth).expect(200);
    await request(apiA.url).get('/v1/me').set(stranger.auth).expect(200);
    const listed = await request(apiA.url).get('/v1/sessions').set(caller.auth).expect(200);
    expect(listed.body.sessions.map((s: { id: string }) => s.id)).toEqual([caller.sessionId]);
  });

  it('signs out everywhere including the calling session by default', async () => {
    const who = newPerson();
    const other = await signIn(apiA.url, who);
    const caller = await signIn(apiA.url, who);

    const res = await request(apiA.url).post('/v1/sessions/revoke-all').set(caller.auth).expect(200);

    expect(res.body).toEqual({ revoked: 2, current_session_kept: false });
    await request(apiA.url).get('/v1/me').set(caller.auth).expect(401);
    await request(apiA.url).get('/v1/me').set(other.auth).expect(401);
  });

  it('refuses a keep_current that is not true or false with 400', async () => {
    const caller = await signIn(apiA.url, newPerson());
    const res = await request(apiA.url).post('/v1/sessions/revoke-all').query({ keep_current: 'yes' }).set(caller.auth).expect(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    await request(apiA.url).get('/v1/me').set(caller.auth).expect(200);
  });

  it('revokes each session once when 30 sign-out-everywhere requests race', async () => {
    const who = newPerson();
    const sessions: LoggedInUser[] = [];
    for (let i = 0; i < 6; i++) sessions.push(await signIn(apiA.url, who));
    const caller = await signIn(apiA.url, who);
    await raiseToEnterprise(apiA.url, caller);

    const answers = await Promise.all(
      Array.from({ length: 30 }, () => request(apiA.url).post('/v1/sessions/revoke-all').query({ keep_current: 'true' }).set(caller.auth)),
    );

    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
    expect(answers.reduce((sum, a) => sum + (a.body.revoked as number), 0)).toBe(6);
    const [{ live }] = await dataSource.query(
      `SELECT count(*)::int AS live FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()`,
      [caller.id],
    );
    expect(live).toBe(1);
  });

  it('refuses the session routes without a user token, or with a token that is not one', async () => {
    await request(apiA.url).get('/v1/sessions').expect(401);
    await request(apiA.url).post('/v1/sessions/revoke-all').set('authorization', 'Bearer not-a-token').expect(401);
    const res = await request(apiA.url).delete('/v1/sessions/ses_0000000000000000000000').set('authorization', 'Basic abc').expect(401);
    expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  /**
   * Two api instances in this process. Passport keeps its strategies in one
   * registry per process, so here the instance started last checks the tokens
   * of both; either way a revocation reaches the other instance's session
   * cache by the `user_auth_changed` notification, within milliseconds, which
   * the checks below wait for (bounded).
   */
  describe('across two api instances', () => {
    let apiB: { app: NestFastifyApplication; url: string };
    const refusedOn = (url: string, auth: { authorization: string }) =>
      waitFor(async () => (await request(url).get('/v1/me').set(auth)).status === 401, { timeoutMs: 2_000, what: `401 on ${url}` });

    beforeAll(async () => {
      apiB = await env.startApi();
    });

    it('refuses a session revoked on instance A on instance B too, and keeps the other session', async () => {
      const who = newPerson();
      const kept = await signIn(apiA.url, who);
      const revoked = await signIn(apiA.url, who);
      await request(apiB.url).get('/v1/me').set(revoked.auth).expect(200);

      await request(apiA.url).delete(`/v1/sessions/${revoked.sessionId}`).set(kept.auth).expect(204);

      await refusedOn(apiB.url, revoked.auth);
      await refusedOn(apiA.url, revoked.auth);
      await request(apiB.url).get('/v1/me').set(kept.auth).expect(200);
    });

    it('refuses a revoked session at once on the instance that revoked it, whichever instance passport handed the token to', async () => {
      // Passport keeps one strategy per name for the whole process: with two instances here, a token instance A has not
      // seen yet is verified by whichever instance registered last. Its session must still be checked with A's own
      // session cache, which A's revocation dropped after its commit: no wait for the notification.
      const who = newPerson();
      for (let round = 0; round < 20; round += 1) {
        const session = await signIn(apiA.url, who);
        await request(apiA.url).get('/v1/me').set(session.auth).expect(200);
        await request(apiA.url).delete(`/v1/sessions/${session.sessionId}`).set(session.auth).expect(204);
        await request(apiA.url).get('/v1/me').set(session.auth).expect(401);
      }
    });

    it('closes the sockets of a session revoked on instance B on instance A too (4401), and keeps the other session’s', async () => {
      const who = newPerson();
      const revoked = await signIn(apiA.url, who);
      const kept = await signIn(apiA.url, who);
      const revokedOnA = await socket(apiA.url, revoked.token);
      const revokedOnB = await socket(apiB.url, revoked.token);
      const keptOnA = await socket(apiA.url, kept.token);

      await request(apiB.url).delete(`/v1/sessions/${revoked.sessionId}`).set(kept.auth).expect(204);

      expect(await revokedOnA.closed()).toEqual({ code: 4401, reason: 'session revoked' });
      expect(await revokedOnB.closed()).toEqual({ code: 4401, reason: 'session revoked' });
      await keptOnA.answersPing('p-kept');
    });

    it('closes every socket of the user on both instances when they sign out everywhere from instance B', async () => {
      const who = newPerson();
      const first = await signIn(apiA.url, who);
      const second = await signIn(apiA.url, who);
      const onA = await socket(apiA.url, first.token);
      const alsoOnA = await socket(apiA.url, second.token);
      const onB = await socket(apiB.url, second.token);

      await request(apiB.url).post('/v1/sessions/revoke-all').set(second.auth).expect(200);

      expect(await onA.closed()).toEqual({ code: 4401, reason: 'session revoked' });
      expect(await alsoOnA.closed()).toEqual({ code: 4401, reason: 'session revoked' });
      expect(await onB.closed()).toEqual({ code: 4401, reason: 'session revoked' });
    });
  });

  it('keeps a working login: a session opened after signing out everywhere is live', async () => {
    const who = newPerson();
    const before = await signIn(apiA.url, who);
    await request(apiA.url).post('/v1/sessions/revoke-all').set(before.auth).expect(200);
    const after = await login(apiA.url, idp, { ...who, name: 'Sam' });
    const listed = await request(apiA.url).get('/v1/sessions').set(after.auth).expect(200);
    expect(listed.body.sessions).toHaveLength(1);
    expect(listed.body.sessions[0]).toMatchObject({ current: true });
  });
});
