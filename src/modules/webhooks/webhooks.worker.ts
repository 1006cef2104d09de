import { Type } from '@nestjs/common';
import { AppEventRecorder } from './app-events.recorder';
import { InboundEventsErasure } from './inbound-events-erasure.subscriber';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor';
import { WebhookFanOut } from './webhook-fan-out';

/** BullMQ consumers and outbox subscribers of the webhooks area, registered by the worker role only. */
export const WEBHOOK_PROCESSORS: Type[] = [WebhookDeliveryProcessor];
export const WEBHOOK_SUBSCRIBERS: Type[] = [WebhookFanOut, AppEventRecorder, InboundEventsErasure];
