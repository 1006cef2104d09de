import { Module } from '@nestjs/common';
import { PackagesModule } from '../packages/packages.module';
import { ProvidersModule } from '../providers/providers.module';
import { AppEventsController } from './app-events.controller';
import { AppEventsRepository } from './app-events.repository';
import { AppEvents } from './app-events.service';
import { DeliveryAttempts } from './delivery-attempts';
import { DeliveryMetricsController } from './delivery-metrics.controller';
import { DeliveryMetricsRepository } from './delivery-metrics.repository';
import { DeliveryMetrics } from './delivery-metrics.service';
import { EndpointDrain } from './endpoint-drain';
import { EndpointLease } from './endpoint-lease';
import { InboundWebhookEventsRepository } from './inbound-webhook-events.repository';
import { InboundWebhooks } from './inbound-webhooks.service';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { WebhookDeliveryQueue } from './webhook-delivery.queue';
import { WebhookMaintenance } from './webhook-maintenance';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookEndpoints } from './webhook-endpoints.service';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { EndpointCheck } from './endpoint-check';
import { WebhookProfiles } from './webhook-profiles.service';
import { WebhookIpsController, WebhooksController } from './webhooks.controller';

/**
 * Outbound webhooks (endpoints and the profile, fan-out, signed delivery, log, replay) and
 * signed inbound provider events. The worker role adds WEBHOOK_PROCESSORS
 * and WEBHOOK_SUBSCRIBERS (webhooks.worker.ts) on top of these services.
 */
@Module({
  imports: [ProvidersModule, PackagesModule],
  controllers: [WebhooksController, WebhookEndpointsController, WebhookIpsController, AppEventsController, DeliveryMetricsController],
  providers: [
    DeliveryMetricsRepository,
    DeliveryMetrics,
    WebhookEndpointsRepository,
    WebhookDeliveriesRepository,
    InboundWebhookEventsRepository,
    WebhookProfiles,
    WebhookEndpoints,
    EndpointCheck,
    WebhookDeliveries,
    WebhookDeliveryQueue,
    InboundWebhooks,
    DeliveryAttempts,
    EndpointLease,
    EndpointDrain,
    WebhookMaintenance,
    AppEventsRepository,
    AppEvents,
  ],
  exports: [
    WebhookEndpointsRepository,
    WebhookDeliveriesRepository,
    InboundWebhookEventsRepository,
    WebhookProfiles,
    WebhookDeliveries,
    WebhookDeliveryQueue,
    DeliveryAttempts,
    EndpointDrain,
    WebhookMaintenance,
    AppEventsRepository,
    AppEvents,
  ],
})
export class WebhooksModule {}
