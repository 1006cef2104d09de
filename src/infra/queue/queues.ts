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
  passwordResets: 'password-resets',
  accountDeletion: 'account-deletion',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
/**
 * Job names of the runtime bridge's queue: the repeating tick of its state
 * poller (produced by its job scheduler only), and the first poll of one
 * install (`{ installId }`, recorded by marketplace with the install's commit;
 * kept here so marketplace need not import the bridge, which depends on it).
 * Two names on purpose: a one-off job under the tick's name, beside its job
 * scheduler, left scheduled ticks silent after a worker restart.
 */
export const RUNTIME_BRIDGE_JOBS = { statePollTick: 'state-poll-tick', pollInstall: 'poll-install' } as const;

export const QUEUE_NAMES: QueueName[] = Object.values(QUEUES);

/**
 * How often a worker looks for jobs whose holder died (lock expired). BullMQ's
 * default is 30 s; with 5 s a job of a killed worker is back in the queue about
 * 5 s after its 30 s lock lapses instead of up to a minute later.
 */
export const STALLED_CHECK_MS = 5_000;
