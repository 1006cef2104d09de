/**
 * Every BullMQ queue of the service, in one place. A processor for a name that
 * is not listed here is refused at worker start-up.
 */
export const QUEUES = {
  system: 'system',
  exports: 'exports',
  agents: 'agents',
  mail: 'mail',
  conformance: 'conformance',
  runtimeBridge: 'runtime-bridge',
  webhookDelivery: 'webhook-delivery',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
export const QUEUE_NAMES: QueueName[] = Object.values(QUEUES);
