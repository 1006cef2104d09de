import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { buildEvent, signInboundWebhook, signWebhook } from '@soul-service/webhooks';
import { envelope } from '../../../src/modules/webhooks/webhook-deliveries.service';
import { newWebhookSecret, signatureHeaders, verifySpecSignature } from '../../../src/modules/webhooks/webhook-signature';
import { deliveryBody, PREVIOUS_SECRET, SECRET } from './fixtures';

/**
 * Parity with the server: for the same inputs the package makes exactly the
 * headers the delivery worker sends, so test kits and `trigger` are
 * indistinguishable from real deliveries.
 */
describe('signWebhook', () => {
  const body = deliveryBody();
  const at = 1_767_607_200;

  it('makes the headers of signatureHeaders (the delivery worker) for one secret', () => {
    expect(signWebhook({ secret: SECRET, payload: body, id: 'evt_1', timestamp: at })).toEqual(
      signatureHeaders({ current: SECRET, previous: null }, 'evt_1', at, body),
    );
  });

  it('makes the headers of signatureHeaders during a rotation (both secrets, two signatures)', () => {
    expect(signWebhook({ secret: SECRET, previousSecret: PREVIOUS_SECRET, payload: body, id: 'evt_1', timestamp: at })).toEqual(
      signatureHeaders({ current: SECRET, previous: PREVIOUS_SECRET }, 'evt_1', at, body),
    );
  });

  it('agrees with the server for freshly generated secrets and a Buffer or a Date', () => {
    for (let round = 0; round < 20; round += 1) {
      const current = newWebhookSecret();
      const previous = newWebhookSecret();
      expect(
        signWebhook({
          secret: current,
          previousSecret: previous,
          payload: Buffer.from(body),
          id: `evt_${round}`,
          timestamp: new Date(at * 1000),
        }),
      ).toEqual(signatureHeaders({ current, previous }, `evt_${round}`, at, body));
    }
  });

  it('uses the envelope id as webhook-id by default, as the service does', () => {
    expect(signWebhook({ secret: SECRET, payload: body })['webhook-id']).toBe((JSON.parse(body) as { id: string }).id);
    expect(signWebhook({ secret: SECRET, payload: 'plain text' })['webhook-id']).toMatch(/^evt_[0-9a-f]{32}$/);
  });
});

describe('signInboundWebhook', () => {
  const body = JSON.stringify({ event: 'order.shipped', action: 'notify', timestamp: new Date().toISOString(), userId: 'usr_1', data: {} });

  it('makes the X-Signature-256 value the service accepts (its own verifySpecSignature)', () => {
    const header = signInboundWebhook(SECRET, body);
    expect(verifySpecSignature(SECRET, Buffer.from(body), header)).toBe(true);
    expect(verifySpecSignature(PREVIOUS_SECRET, Buffer.from(body), header)).toBe(false);
  });

  it('is the GitHub sha256 scheme, so @octokit/webhooks-methods verifies it', async () => {
    await expect(octokitVerify(SECRET, body, signInboundWebhook(SECRET, body))).resolves.toBe(true);
  });
});

describe('buildEvent', () => {
  it('serialises the envelope byte for byte as the service does', () => {
    const input = {
      eventId: 'evt_abc',
      type: 'install.removed',
      createdAt: new Date('2026-01-05T10:00:00.000Z'),
      appId: 'app_xyz',
      data: { reason: 'user_uninstalled' },
    };
    const server = envelope(input);
    const built = buildEvent({ id: input.eventId, type: input.type, created_at: input.createdAt, app_id: input.appId, data: input.data });
    expect(built.body).toBe(server.body);
    expect(built.event.idempotency_key).toBe(server.idempotencyKey);
  });
});
