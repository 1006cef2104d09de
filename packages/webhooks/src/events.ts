/**
 * The events the service delivers, typed as the service sends them (spec
 * "Webhook events to providers", docs/webhooks.md). The package keeps its own
 * copy rather than importing the server: it ships with no dependencies, and a
 * drift test compares this list with the server's so the two cannot part.
 */

/** Event types a webhook endpoint may subscribe to (`["*"]` subscribes to all of them). */
export const WEBHOOK_EVENT_TYPES = [
  'package.submitted',
  'package.published',
  'package.suspended',
  'install.created',
  'install.removed',
  'capability.invoked',
  'capability.failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent when an endpoint is created, its URL changes, or the console asks for a check; never subscribed to. */
export const PING_EVENT_TYPE = 'ping';

export const RISK_TIERS = ['data_only', 'action_capable', 'high_trust', 'strategic_surface'] as const;
export type RiskTier = (typeof RISK_TIERS)[number];
export const CAPABILITY_MODES = ['state', 'action', 'history', 'realtime', 'webhook'] as const;
export type CapabilityMode = (typeof CAPABILITY_MODES)[number];
export const SUSPENSION_REASONS = ['policy_violation', 'inactivity', 'health_check_failures'] as const;
export type SuspensionReason = (typeof SUSPENSION_REASONS)[number];
/** `account_deleted`: the user erased their account; delete what you hold about `user_id` too. */
export const REMOVAL_REASONS = ['user_uninstalled', 'soul_deleted', 'package_suspended', 'account_deleted'] as const;
export type RemovalReason = (typeof REMOVAL_REASONS)[number];

export interface PackageSubmittedData {
  package_id: string;
  version_id: string;
  version: string;
  name: string;
  risk_tier: RiskTier;
  /** The submitter's email address. */
  submitted_by: string;
}

export interface PackagePublishedData {
  package_id: string;
  version_id: string;
  version: string;
  name: string;
  catalog_url: string;
}

export interface PackageSuspendedData {
  package_id: string;
  reason: SuspensionReason;
  message: string;
  /** ISO 8601 UTC. */
  suspended_at: string;
  remediation: string;
}

export interface InstallCreatedData {
  install_id: string;
  user_id: string;
  package_id: string;
  version: string;
  scopes_granted: string[];
}

export interface InstallRemovedData {
  install_id: string;
  user_id: string;
  package_id: string;
  reason: RemovalReason;
}

export interface CapabilityInvokedData {
  capability_name: string;
  mode: CapabilityMode;
  user_id: string;
  install_id: string;
  request_id: string;
  duration_ms: number;
  /** `degraded`: the runtime answered with partial data. */
  status: 'ok' | 'degraded';
}

export interface CapabilityFailedData {
  capability_name: string;
  mode: CapabilityMode;
  user_id: string;
  install_id: string;
  request_id: string;
  /** The runtime error envelope's code (`TIMEOUT`, `UPSTREAM_UNAVAILABLE`, …). */
  error_code: string;
  error_message: string;
  retries_exhausted: boolean;
  duration_ms: number;
}

export interface PingData {
  endpoint_id: string;
  url: string;
  event_types: string[];
}

/** `data` of each event type. */
export interface WebhookEventDataMap {
  'package.submitted': PackageSubmittedData;
  'package.published': PackagePublishedData;
  'package.suspended': PackageSuspendedData;
  'install.created': InstallCreatedData;
  'install.removed': InstallRemovedData;
  'capability.invoked': CapabilityInvokedData;
  'capability.failed': CapabilityFailedData;
  ping: PingData;
}

/** The envelope every delivery carries; the same bytes on every retry and replay. */
export interface WebhookEnvelope<T extends string = string, D = Record<string, unknown>> {
  /** The event id (`evt_…`), also sent as `webhook-id`. */
  id: string;
  type: T;
  /** ISO 8601 UTC. */
  created_at: string;
  app_id: string;
  /** Stable per event and app (`<id>.<app_id>`): store processed keys and skip repeats (delivery is at least once). */
  idempotency_key: string;
  data: D;
}

/** One event of a given type, e.g. `WebhookEventOf<'install.created'>`. */
export type WebhookEventOf<T extends keyof WebhookEventDataMap> = WebhookEnvelope<T, WebhookEventDataMap[T]>;

/**
 * Every event the service sends, discriminated by `type`: `switch (event.type)`
 * narrows `event.data`. A type the service adds after this version of the
 * package reaches you too (its signature is valid); keep a `default` branch.
 */
export type WebhookEvent = { [T in keyof WebhookEventDataMap]: WebhookEventOf<T> }[keyof WebhookEventDataMap];

/**
 * The fields of each type's `data`, in the order the service writes them. The
 * mapped type makes the compiler refuse a type without an entry or a name that
 * is not a field; the drift test compares these with the server's events.
 */
export const WEBHOOK_EVENT_FIELDS: { readonly [T in keyof WebhookEventDataMap]: readonly (keyof WebhookEventDataMap[T])[] } = {
  'package.submitted': ['package_id', 'version_id', 'version', 'name', 'risk_tier', 'submitted_by'],
  'package.published': ['package_id', 'version_id', 'version', 'name', 'catalog_url'],
  'package.suspended': ['package_id', 'reason', 'message', 'suspended_at', 'remediation'],
  'install.created': ['install_id', 'user_id', 'package_id', 'version', 'scopes_granted'],
  'install.removed': ['install_id', 'user_id', 'package_id', 'reason'],
  'capability.invoked': ['capability_name', 'mode', 'user_id', 'install_id', 'request_id', 'duration_ms', 'status'],
  'capability.failed': [
    'capability_name',
    'mode',
    'user_id',
    'install_id',
    'request_id',
    'error_code',
    'error_message',
    'retries_exhausted',
    'duration_ms',
  ],
  ping: ['endpoint_id', 'url', 'event_types'],
};

/** True for the types this version of the package knows (the subscribable ones and `ping`). */
export function isKnownEventType(type: string): type is keyof WebhookEventDataMap {
  return Object.prototype.hasOwnProperty.call(WEBHOOK_EVENT_FIELDS, type);
}
