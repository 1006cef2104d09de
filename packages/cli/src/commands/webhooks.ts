import { ok, type Schemas } from '@soul-service/api-client';
import type { Command } from '../command';
import { APP_OPTION, appId } from './shared';

type Delivery = Schemas['DeliverySummaryDto'];
type EventType = Schemas['WebhookTestDto']['type'];

function sentLine(d: Delivery): string {
  return `Sent a test ${d.event_type} as delivery ${d.id} (event ${d.event_id}): ${d.status}.`;
}

export const trigger: Command = {
  name: 'trigger',
  summary: "Send a signed test event of a type to the app's webhook endpoint",
  args: '<event_type>',
  minArgs: 1,
  maxArgs: 1,
  options: { app: APP_OPTION },
  examples: ['soul trigger install.created --app app_123', 'soul trigger capability.failed'],
  async run(context) {
    const app = await appId(context);
    // The service judges the type (its own list of event types), so the CLI cannot drift from it.
    const delivery = await ok(
      context.api().POST('/v1/providers/apps/{app_id}/webhook/test', {
        params: { path: { app_id: app } },
        body: { type: context.args[0] as EventType },
      }),
    );
    context.out.result(delivery, sentLine(delivery));
  },
};

export const deliveriesReplay: Command = {
  name: 'deliveries replay',
  summary: 'Send a delivered or failed webhook delivery again (same event id and idempotency key)',
  args: '<delivery_id>',
  minArgs: 1,
  maxArgs: 1,
  options: { app: APP_OPTION },
  examples: ['soul deliveries replay dlv_123 --app app_123'],
  async run(context) {
    const app = await appId(context);
    const delivery = await ok(
      context.api().POST('/v1/providers/apps/{app_id}/webhook/deliveries/{delivery_id}/replay', {
        params: { path: { app_id: app, delivery_id: context.args[0] } },
      }),
    );
    context.out.result(
      delivery,
      `Replaying ${delivery.replay_of ?? context.args[0]} as delivery ${delivery.id} (${delivery.event_type}): ${delivery.status}.`,
    );
  },
};
