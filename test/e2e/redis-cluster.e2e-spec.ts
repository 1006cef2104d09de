import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import WebSocket from 'ws';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { RedisCluster } from '../support/redis-cluster';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { LoggedInUser, login } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';
import { subscribeWebhook } from '../support/webhook-profiles';

/**
 * The service on a three-primary Redis Cluster (REDIS_CLUSTER_NODES): BullMQ
 * under its hash-tagged prefix, multi-key scripts and MULTIs within one slot,
 * and the gateway on sharded pub/sub. Two api instances and a worker share the
 * database and the cluster.
 */
describe('Redis Cluster: the backbone on a three-node cluster', () => {
  let cluster: RedisCluster;
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let apiA: { app: NestFastifyApplication; url: string };
  let apiB: { app: NestFastifyApplication; url: string };
  let alice: LoggedInUser;
  let bob: LoggedInUser;
  const clients: GatewayClient[] = [];

  async function ready(base: string, token: string): Promise<GatewayClient> {
    const client = new GatewayClient(new WebSocket(`${base.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(token)}`));
    clients.push(client);
    await client.next('ready');
    return client;
  }

  async function addContact(owner: LoggedInUser, name: string): Promise<string> {
    const res = await request(apiA.url)
      .post('/v1/contacts')
      .set(owner.auth)
      .send({ name, email: `${name.toLowerCase()}.cluster@example.com` })
      .expect(201);
    return res.body.id;
  }

  beforeAll(async () => {
    assertTestCaTrusted();
    cluster = await RedisCluster.start();
    idp = await TestIdentityProvider.start();
    smtp = await SmtpSink.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({
      ...idp.env,
      SMTP_URL: smtp.url,
      REDIS_CLUSTER_NODES: cluster.nodes,
      WEBHOOK_RETRY_BASE_MS: '1',
    });
    apiA = await env.startApi();
    apiB = await env.startApi();
    await env.startWorker();
    alice = await login(apiA.url, idp, { sub: 'uid-cluster-1', name: 'Alice', email: 'alice.cluster@example.com' });
    bob = await login(apiB.url, idp, { sub: 'uid-cluster-2', name: 'Bob', email: 'bob.cluster@example.com' });
  });

  afterEach(() => GatewayClient.terminateAll(clients));

  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await smtp?.close();
    await idp?.close();
    await cluster?.stop();
  });

  it('reports Redis up on both api instances', async () => {
    for (const api of [apiA, apiB]) {
      const res = await request(api.url).get('/health/ready').expect(200);
      expect(res.body.checks).toMatchObject({ redis: 'up' });
    }
  });

  it('delivers a provider webhook through the outbox, BullMQ and the endpoint slots to the receiver', async () => {
    const developer = await onboardDeveloper(apiA.url, smtp, 'cluster-hooks@example.com');
    const app = await registerApp(apiA.url, developer, { webhook_url: receiver.url });
    const auth = { authorization: `Bearer ${await appToken(apiA.url, app)}` };
    await subscribeWebhook(apiA.url, app, auth, { event_types: ['*'] });

    const sent = await request(apiA.url)
      .post(`/v1/providers/apps/${app.id}/webhook/test`)
      .set(auth)
      .send({ type: 'install.created' })
      .expect(202);
    await waitFor(() => receiver.received.length > 0, { timeoutMs: 20_000, what: 'a webhook at the receiver' });
    expect(receiver.received[0].body).toMatchObject({ type: 'install.created' });

    await waitFor(
      async () => {
        const res = await request(apiA.url)
          .get(`/v1/providers/apps/${app.id}/webhook/deliveries/${sent.body.id as string}`)
          .set(auth);
        return res.body.status === 'delivered';
      },
      { timeoutMs: 10_000, what: 'the delivery recorded as delivered' },
    );
    // BullMQ's keys are under the hash-tagged prefix, in the slot of `{<REDIS_PREFIX>}`.
    const slot = Number(await cluster.cli(cluster.ports[0], 'CLUSTER', 'KEYSLOT', `{${env.env.REDIS_PREFIX}}:bull:webhook-delivery:id`));
    expect(Number(await cluster.cli(cluster.ports[0], 'CLUSTER', 'KEYSLOT', env.env.REDIS_PREFIX))).toBe(slot);
  });

  it('relays message.send on instance A to the recipient’s socket on instance B (sharded pub/sub)', async () => {
    const bobAtAlice = await addContact(alice, 'Bob');
    const aliceAtBob = await addContact(bob, 'Alice');
    const sender = await ready(apiA.url, alice.token);
    const recipient = await ready(apiB.url, bob.token);
    // Instance B holds Bob's channel as a shard channel on the node that owns its slot, not as a classic channel.
    const bobChannel = `${env.env.REDIS_PREFIX}:gateway:user:${bob.id}`;
    const shardChannels = await Promise.all(cluster.ports.map((port) => cluster.cli(port, 'PUBSUB', 'SHARDCHANNELS')));
    expect(shardChannels.join('\n').split('\n')).toContain(bobChannel);
    const classicChannels = await Promise.all(cluster.ports.map((port) => cluster.cli(port, 'PUBSUB', 'CHANNELS')));
    expect(classicChannels.join('\n').split('\n')).not.toContain(bobChannel);

    sender.send({ type: 'message.send', id: 'c-1', data: { recipient_id: bobAtAlice, content: 'hi over the cluster' } });
    const ack = await sender.next('ack', (f) => f.id === 'c-1');
    const inbound = await recipient.next('message.created');
    expect(inbound.data).toMatchObject({
      id: ack.data.id,
      direction: 'inbound',
      sender_contact_id: aliceAtBob,
      content: 'hi over the cluster',
    });
    // Presence (one user's keys in one MULTI) works across the instances too.
    const delivered = await sender.next('message.delivered');
    expect(delivered.data).toMatchObject({ message_id: ack.data.id, contact_id: bobAtAlice });
  });

  it('counts /v1 calls in every window of the tier with one script: X-RateLimit headers go down by one', async () => {
    const first = await request(apiB.url).get('/v1/contacts').set(alice.auth).expect(200);
    const second = await request(apiA.url).get('/v1/contacts').set(alice.auth).expect(200);
    expect(first.headers['x-ratelimit-limit']).toBe('60');
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    expect(Number(second.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
  });

  it('spreads the service’s keys over more than one node', async () => {
    const sizes = await Promise.all(cluster.ports.map(async (port) => Number(await cluster.cli(port, 'DBSIZE'))));
    expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(1);
  });
});
