import { getDataSourceToken } from '@nestjs/typeorm';
import { Issuer, errors as oidcErrors, generators } from 'openid-client';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { factories } from '../support/factories';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, RegisteredApp, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';

const CONFIRM = { confirm: 'DELETE' };

/**
 * Every table that holds rows of a user, with the column naming them. After
 * an erasure none may hold a row of the deleted user.
 */
const PERSONAL_TABLES: Array<[table: string, column: string]> = [
  ['users', 'id'],
  ['sessions', 'user_id'],
  ['souls', 'user_id'],
  ['contacts', 'user_id'],
  ['groups', 'user_id'],
  ['messages', 'sender_id'],
  ['exports', 'user_id'],
  ['agent_actions', 'user_id'],
  ['installs', 'user_id'],
  ['oauth_refresh_tokens', 'user_id'],
  ['oauth_authorization_codes', 'user_id'],
  ['action_confirmations', 'user_id'],
  ['capability_executions', 'user_id'],
  ['idempotency_keys', 'owner_id'],
];

/**
 * `DELETE /v1/me` end to end: signed out at once, then the worker erases the
 * account and the provider's webhook receiver (real HTTPS on loopback) gets
 * `install.removed` with reason `account_deleted`.
 */
describe('account deletion: DELETE /v1/me', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;
  let app: RegisteredApp;
  let packageId: string;
  let bob: LoggedInUser;
  const clients: GatewayClient[] = [];
  let people = 0;

  const tombstone = async (userId: string) =>
    (await dataSource.query<Array<{ content: string }>>(`SELECT * FROM account_deletions WHERE user_id = $1`, [userId]))[0] as
      Record<string, unknown> | undefined;
  const erased = (userId: string) =>
    waitFor(async () => ((await tombstone(userId))?.erased_at ? tombstone(userId) : undefined), { what: `the erasure of ${userId}` });
  /**
   * The session check refuses these credentials at once: the instance that
   * revoked the sessions dropped them from its own session cache after the
   * commit (the guard checks sessions with its own application's cache).
   */
  const refused = async (auth: { authorization: string }) => {
    await request(url).get('/v1/me').set(auth).expect(401);
  };
  const rowsOf = async (userId: string) => {
    const left: Record<string, number> = {};
    for (const [table, column] of PERSONAL_TABLES) {
      const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [userId]);
      if (n > 0) left[table] = n;
    }
    return left;
  };

  function newPerson(): { sub: string; email: string; name: string } {
    people += 1;
    return { sub: `uid-delete-${people}`, email: `person${people}.delete@example.com`, name: `Person ${people}` };
  }

  /** The provider's side of an install: the authorization-code flow, answering the install id and the app's tokens for it. */
  async function installThroughProvider(user: LoggedInUser): Promise<{ installId: string; refreshToken: string; accessToken: string }> {
    const verifier = generators.codeVerifier();
    const authorize = {
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: 'https://acme.example/callback',
      package_id: packageId,
      scope: 'capabilities:execute',
      state: 'st',
      code_challenge: generators.codeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    const consent = await request(url).post('/v1/oauth/authorize').set(user.auth).send(authorize).expect(200);
    const code = new URL(consent.body.redirect_to as string).searchParams.get('code')!;
    const tokens = await tokenClient().grant({
      grant_type: 'authorization_code',
      code,
      redirect_uri: authorize.redirect_uri,
      code_verifier: verifier,
    });
    return { installId: consent.body.install_id as string, refreshToken: tokens.refresh_token!, accessToken: tokens.access_token! };
  }

  function tokenClient() {
    const issuer = new Issuer({ issuer: url, token_endpoint: `${url}/v1/auth/token` });
    return new issuer.Client({
      client_id: app.client_id,
      client_secret: app.client_secret,
      token_endpoint_auth_method: 'client_secret_basic',
    });
  }

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, WEBHOOK_RETRY_BASE_MS: '1' });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    await env.startWorker();
    const developer = await onboardDeveloper(url, smtp, 'deletion@example.com');
    app = await registerApp(url, developer, { webhook_url: receiver.url });
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Acme Ledger',
      slug: 'acme-ledger-deletion',
      description: 'Balances',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action'),
    }));
    bob = await login(url, idp, { sub: 'uid-delete-bob', name: 'Bob', email: 'bob.delete@example.com' });
  });

  afterEach(() => GatewayClient.terminateAll(clients));

  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('refuses a deletion without the confirmation phrase with 400 and changes nothing', async () => {
    const who = newPerson();
    const alice = await login(url, idp, who);
    for (const body of [undefined, {}, { confirm: 'delete' }, { confirm: 'yes' }, { confirm: ['DELETE'] }]) {
      const call = request(url).delete('/v1/me').set(alice.auth);
      const res = await (body === undefined ? call : call.send(body)).expect(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    }
    await request(url).get('/v1/me').set(alice.auth).expect(200);
    expect(await tombstone(alice.id)).toBeUndefined();
  });

  it('refuses a request without a user token with 401', async () => {
    await request(url).delete('/v1/me').send(CONFIRM).expect(401);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    await request(url).delete('/v1/me').set(appAuth).send(CONFIRM).expect(401);
  });

  it('signs the user out everywhere at once, erases everything personal, and tells the provider install.removed with reason account_deleted', async () => {
    const who = newPerson();
    const alice = await login(url, idp, who);
    const otherSession = await login(url, idp, who);
    await raiseToEnterprise(url, alice);

    // Everything personal the service can hold: soul values, contacts, a group, sent and received messages,
    // an idempotency record, an export, an agent action, an install with its OAuth grant.
    await request(url)
      .patch('/v1/soul')
      .set(alice.auth)
      .send({ values: ['honesty'] })
      .expect(200);
    const aliceToBob = await request(url)
      .post('/v1/contacts')
      .set(alice.auth)
      .send({ name: 'Bob', email: 'bob.delete@example.com' })
      .expect(201);
    const bobToAlice = await request(url).post('/v1/contacts').set(bob.auth).send({ name: who.name, email: who.email }).expect(201);
    await request(url)
      .post('/v1/groups')
      .set(alice.auth)
      .send({ name: 'Friends', member_ids: [aliceToBob.body.id] })
      .expect(201);
    await request(url)
      .post('/v1/messages')
      .set(alice.auth)
      .set('idempotency-key', 'alice-secret-1')
      .send({ recipient_id: aliceToBob.body.id, content: 'a secret from Alice' })
      .expect(201);
    const fromBob = await request(url)
      .post('/v1/messages')
      .set(bob.auth)
      .send({ recipient_id: bobToAlice.body.id, content: 'hi Alice' })
      .expect(201);
    await request(url).post('/v1/soul/export').set(alice.auth).send({ format: 'json' }).expect(202);
    await factories(dataSource).agentAction(alice.id, { params: { draft: 'dear diary' } });
    const grant = await installThroughProvider(alice);
    const callWithGrant = () =>
      request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
        .set('authorization', `Bearer ${grant.accessToken}`)
        .send({ params: { account: 'checking' } });
    await callWithGrant().expect(200);
    // An event the provider sent about Alice (what the inbound webhook endpoint keeps).
    await dataSource.query(
      `INSERT INTO inbound_webhook_events (id, app_id, event_type, action, user_id, occurred_at, body_sha256, data)
       VALUES ('iwe_' || md5(random()::text), $1, 'account.updated', 'updated', $2, now(), md5(random()::text), '{"balance": 12}')`,
      [app.id, alice.id],
    );
    const socketA = await GatewayClient.open(url, alice.token);
    const socketB = await GatewayClient.open(url, otherSession.token);
    clients.push(socketA, socketB);

    const res = await request(url).delete('/v1/me').set(alice.auth).send(CONFIRM).expect(202);

    expect(res.body).toEqual({
      id: alice.id,
      status: 'erasing',
      requested_at: expect.any(String),
      message: expect.stringContaining('deleted'),
    });
    // At once: every session is refused and every socket closes.
    await refused(alice.auth);
    await refused(otherSession.auth);
    // 4403 `user deleted` whether a socket's re-check runs before or after the worker's erasure deleted the row.
    expect(await socketA.closed()).toEqual({ code: 4403, reason: 'user deleted' });
    expect(await socketB.closed()).toEqual({ code: 4403, reason: 'user deleted' });

    const stone = await erased(alice.id);
    expect(Object.keys(stone).sort()).toEqual(['account_created_at', 'erased_at', 'requested_at', 'user_id']);
    expect(await rowsOf(alice.id)).toEqual({});
    // The webhooks area erases what providers sent about her when the erasure's event reaches it.
    await waitFor(
      async () => (await dataSource.query(`SELECT 1 FROM inbound_webhook_events WHERE user_id = $1`, [alice.id])).length === 0,
      { what: 'the inbound provider events of the erased account to go' },
    );

    const removed = await waitFor(
      () =>
        receiver.received.find(
          (r) => r.body.type === 'install.removed' && (r.body.data as { install_id?: string }).install_id === grant.installId,
        ),
      { what: 'install.removed delivery' },
    );
    expect(removed.body).toMatchObject({
      app_id: app.id,
      data: { install_id: grant.installId, user_id: alice.id, package_id: packageId, reason: 'account_deleted' },
    });

    // The install's token family is gone: the provider can neither refresh nor call with the access token it holds.
    const refresh = await tokenClient()
      .refresh(grant.refreshToken)
      .catch((e: unknown) => e);
    expect((refresh as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_grant');
    const call = await callWithGrant();
    expect(call.status).toBe(401);
    expect(call.body.type).toBe('https://docs.example.com/developers/errors#invalid_token');

    // Bob keeps his own records: his contact, and the message he sent (Alice's messages to him went with her account).
    await request(url).get(`/v1/contacts/${bobToAlice.body.id}`).set(bob.auth).expect(200);
    const history = await request(url).get('/v1/messages').query({ with: bobToAlice.body.id }).set(bob.auth).expect(200);
    expect(history.body.messages.map((m: { id: string }) => m.id)).toEqual([fromBob.body.id]);
    expect(JSON.stringify(history.body)).not.toContain('a secret from Alice');
    await request(url).get('/v1/me').set(bob.auth).expect(200);
  });

  it('lets the same identity sign in again as a new, empty account', async () => {
    const who = newPerson();
    const before = await login(url, idp, who);
    await request(url).post('/v1/contacts').set(before.auth).send({ name: 'Carol', email: 'carol@example.com' }).expect(201);
    await request(url).delete('/v1/me').set(before.auth).send(CONFIRM).expect(202);

    // Before the erasure has run as well as after it: the identity was released by the request.
    const after = await login(url, idp, who);
    expect(after.id).not.toBe(before.id);
    const contacts = await request(url).get('/v1/contacts').set(after.auth).expect(200);
    expect(contacts.body.contacts).toEqual([]);
    const me = await request(url).get('/v1/me').set(after.auth).expect(200);
    expect(me.body).toMatchObject({ id: after.id, email: who.email, soul_id: expect.stringMatching(/^soul_/) });
    await erased(before.id);
    await request(url).get('/v1/me').set(after.auth).expect(200);
  });

  it('never hands what reached the deleted account to a later account of the same address; what was sent after the deletion waits for it', async () => {
    const who = newPerson();
    const before = await login(url, idp, who);
    const bobToThem = await request(url).post('/v1/contacts').set(bob.auth).send({ name: who.name, email: who.email }).expect(201);
    const send = (content: string) =>
      request(url).post('/v1/messages').set(bob.auth).send({ recipient_id: bobToThem.body.id, content }).expect(201);
    await send('Before the deletion.');
    const received = async (userId: string) =>
      (
        await dataSource.query<Array<{ content: string }>>(
          `SELECT m.content FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.recipient_user_id = $1 ORDER BY m.created_at`,
          [userId],
        )
      ).map((row) => row.content);
    expect(await received(before.id)).toEqual(['Before the deletion.']);

    await request(url).delete('/v1/me').set(before.auth).send(CONFIRM).expect(202);
    await erased(before.id);
    await send('After the deletion.');
    // Bob keeps both: they are his records.
    const bobThread = await request(url).get('/v1/messages').query({ with: bobToThem.body.id }).set(bob.auth).expect(200);
    expect((bobThread.body.messages as Array<{ content: string }>).map((m) => m.content).sort()).toEqual([
      'After the deletion.',
      'Before the deletion.',
    ]);

    // The address proven again, by a new account: only what was sent to it after the deletion reaches it.
    const after = await login(url, idp, who);
    expect(after.id).not.toBe(before.id);
    expect(await received(after.id)).toEqual(['After the deletion.']);
  });

  it('does the work once when 30 DELETE /v1/me race: one tombstone, one install.removed, every answer 202 or 401', async () => {
    const who = newPerson();
    const alice = await login(url, idp, who);
    await raiseToEnterprise(url, alice);
    const grant = await installThroughProvider(alice);

    const answers = await Promise.all(Array.from({ length: 30 }, () => request(url).delete('/v1/me').set(alice.auth).send(CONFIRM)));

    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 202 || s === 401)).toBe(true);
    expect(statuses).toContain(202);
    const accepted = answers.filter((a) => a.status === 202).map((a) => a.body.requested_at as string);
    expect(new Set(accepted).size).toBe(1);
    await erased(alice.id);
    const [{ n: tombstones }] = await dataSource.query(`SELECT count(*)::int AS n FROM account_deletions WHERE user_id = $1`, [alice.id]);
    expect(tombstones).toBe(1);
    const events = await dataSource.query(
      `SELECT payload FROM events WHERE type = 'install.removed' AND payload->'data'->>'install_id' = $1`,
      [grant.installId],
    );
    expect(events).toHaveLength(1);
    expect(events[0].payload.data.reason).toBe('account_deleted');
    expect(await rowsOf(alice.id)).toEqual({});
  });

  it("leaves other users' data alone", async () => {
    const who = newPerson();
    const alice = await login(url, idp, who);
    const carol = await login(url, idp, newPerson());
    const carolsContact = await request(url).post('/v1/contacts').set(carol.auth).send({ name: 'Alice', email: who.email }).expect(201);
    await request(url)
      .post('/v1/messages')
      .set(carol.auth)
      .send({ recipient_id: carolsContact.body.id, content: 'kept by Carol' })
      .expect(201);
    const carolRowsBefore = await rowsOf(carol.id);

    await request(url).delete('/v1/me').set(alice.auth).send(CONFIRM).expect(202);
    await erased(alice.id);

    expect(await rowsOf(carol.id)).toEqual(carolRowsBefore);
    const history = await request(url).get('/v1/messages').query({ with: carolsContact.body.id }).set(carol.auth).expect(200);
    expect(history.body.messages.map((m: { content: string }) => m.content)).toEqual(['kept by Carol']);
  });

  it('keeps DELETE /v1/soul as it was: only the soul record goes, the account stays', async () => {
    const alice = await login(url, idp, newPerson());
    await request(url).delete('/v1/soul').set(alice.auth).expect(200);
    await request(url).get('/v1/me').set(alice.auth).expect(200);
    expect(await tombstone(alice.id)).toBeUndefined();
  });
});
