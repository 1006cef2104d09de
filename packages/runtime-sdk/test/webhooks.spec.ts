import { createHmac, randomBytes } from 'node:crypto';
import express from 'express';
import { defineRuntime, DeliveredEvent, Runtime } from '../src';
import { RuntimeTestKit } from '../src/testing';
import { bank } from './bank';
import { serve } from './serve';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The runtime as the app's webhook receiver: deliveries verified over the raw
 * bytes with @soul-service/webhooks, exactly the four cases conformance's
 * `error_handling.webhook_signature` sends, a rotation, and a body that a
 * parser re-serialised.
 */
describe('webhook deliveries', () => {
  let kit: RuntimeTestKit;
  let current: string;
  let previous: string;
  let runtime: Runtime<typeof bank>;
  let received: Array<{ event: DeliveredEvent; livemode: boolean }>;
  let server: { url: string; close: () => Promise<void> };

  const deliver = (headers: Record<string, string>, body: string, path = '/hooks') =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  beforeAll(async () => {
    kit = await RuntimeTestKit.create();
    current = secret();
    previous = secret();
    runtime = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      webhooks: {
        secret: [current, previous],
        path: '/hooks',
        handler: (event, context) => {
          received.push({ event, livemode: context.livemode });
        },
      },
      handlers: {
        balance: async () => ({ data: { available: 1, currency: 'EUR' } }),
        transfer: async () => ({ result: { transferId: 't', state: 'completed' as const }, message: 'ok' }),
        transactions: async () => ({ items: [] }),
        ticker: () => undefined,
      },
    });
    const app = express();
    app.use(runtime.express());
    server = await serve(app);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    received = [];
  });

  it('acknowledges a signed delivery with 200 and hands the handler the typed event', async () => {
    const { headers, body } = kit.signedDelivery({ type: 'install.created', data: { install_id: 'inst_1' } }, current, { livemode: false });
    const res = await deliver(headers, body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true });
    expect(received).toEqual([
      { event: expect.objectContaining({ type: 'install.created', data: { install_id: 'inst_1' } }), livemode: false },
    ]);
  });

  it('accepts the previous secret during a rotation', async () => {
    const { headers, body } = kit.signedDelivery({ type: 'install.created', data: {} }, previous);
    expect((await deliver(headers, body)).status).toBe(200);
  });

  it('answers conformance’s probes: 401 without a signature, without the sha256= prefix and with a wrong one; 2xx signed', async () => {
    const { body } = kit.signedDelivery({ type: 'capability.invoked', data: {} }, current);
    const hmac = (key: string) => createHmac('sha256', key).update(body).digest('hex');
    expect((await deliver({}, body)).status).toBe(401);
    expect((await deliver({ 'x-service-signature': hmac(current) }, body)).status).toBe(401);
    expect((await deliver({ 'x-service-signature': `sha256=${hmac(`${current}-wrong`)}` }, body)).status).toBe(401);
    expect((await deliver({ 'x-service-signature': `sha256=${hmac(current)}` }, body)).status).toBe(200);
    expect(received).toHaveLength(1);
  });

  it('refuses a body that is not the signed bytes (re-serialised), naming the mistake', async () => {
    const { headers, body } = kit.signedDelivery({ type: 'install.created', data: { install_id: 'inst_1' } }, current);
    const res = await deliver(headers, JSON.stringify(JSON.parse(body), null, 2));
    expect(res.status).not.toBe(200);
    expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/payload_reserialized|signature_mismatch/);
    expect(received).toHaveLength(0);
  });
});
