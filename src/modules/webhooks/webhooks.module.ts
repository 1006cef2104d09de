import { Module } from '@nestjs/common';
import { PackagesModule } from '../packages/packages.module';
import { ProvidersModule } from '../providers/providers.module';
import { DeliveryAttempts } from './delivery-attempts';
import { EndpointDrain } from './endpoint-drain';
import { EndpointLease } from './endpoint-lease';
import { InboundWebhookEventsRepository } from './inbound-webhook-events.repository';
import { InboundWebhooks } from './inbound-webhooks.service';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { WebhookDeliveryQueue } from './webhook-delivery.queue';
import { WebhookMaintenance } from './webhook-maintenance';
import { WebhookProfilesRepository } from './webhook-profiles.repository';
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
    WebhookProfilesRepository,
    WebhookDeliveriesRepository,
    InboundWebhookEventsRepository,
    WebhookProfiles,
    WebhookDeliveries,
    WebhookDeliveryQueue,
    InboundWebhooks,
    DeliveryAttempts,
    EndpointLease,
    EndpointDrain,
    WebhookMaintenance,
  ],
  exports: [
    WebhookProfilesRepository,
    WebhookDeliveriesRepository,
    InboundWebhookEventsRepository,
    WebhookProfiles,
    WebhookDeliveries,
    WebhookDeliveryQueue,
    DeliveryAttempts,
    EndpointDrain,
    WebhookMaintenance,
  ],
})
export class WebhooksModule {}
