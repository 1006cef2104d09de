import { Module } from '@nestjs/common';
import { PackagesModule } from '../packages/packages.module';
import { ProvidersModule } from '../providers/providers.module';
import { DeliveryAttempts } from './delivery-attempts';
import { EndpointSlots } from './endpoint-slots';
import { InboundWebhooks } from './inbound-webhooks.service';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { WebhookDeliveryQueue } from './webhook-delivery.queue';
import { WebhookMaintenance } from './webhook-maintenance';
import { WebhookProfiles } from './webhook-profiles.service';
import { WebhookIpsController, WebhooksController } from './webhooks.controller';

/**
 * Outbound webhooks (profiles, fan-out, signed delivery, log, replay) and
 * signed inbound provider events. The worker role adds WEBHOOK_PROCESSORS
 * and WEBHOOK_SUBSCRIBERS (webhooks.worker.ts) on top of these services.
 */
@Module({
  imports: [ProvidersModule, PackagesModule],
  controllers: [WebhooksController, WebhookIpsController],
  providers: [
    WebhookProfiles,
    WebhookDeliveries,
    WebhookDeliveryQueue,
    InboundWebhooks,
    DeliveryAttempts,
    EndpointSlots,
    WebhookMaintenance,
  ],
  exports: [WebhookProfiles, WebhookDeliveries, WebhookDeliveryQueue, DeliveryAttempts, EndpointSlots, WebhookMaintenance],
})
export class WebhooksModule {}
