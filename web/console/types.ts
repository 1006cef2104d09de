/** Shapes of the provider platform's answers, as the controllers return them. */

export interface Account {
  id: string;
  company_name: string;
  email: string;
  email_verified: boolean;
  email_verified_at: string | null;
  mfa_enabled: boolean;
  status: string;
  created_at: string;
}

export interface App {
  id: string;
  name: string;
  description: string;
  redirect_uris: string[];
  webhook_url: string | null;
  scopes: string[];
  client_id: string;
  /** Only in the answer to creation and rotation. */
  client_secret?: string;
  /** Only in the answer that gave the app its first `webhook_url` (its webhook profile was created then). */
  webhook_secret?: string;
  created_at: string;
  updated_at: string;
}

// The platform's scope list itself, so the console's choices cannot drift from what the API accepts.
export { PLATFORM_SCOPES } from '../../src/modules/providers/scopes';

export { RISK_TIERS } from '../../src/modules/packages/capability-descriptor';

export interface Version {
  id: string;
  packageId: string;
  version: string;
  state: string;
  /** The runtime this version is validated against; live traffic uses the published version's. */
  runtimeUrl: string;
  capabilities: unknown[];
  reviewReason: string | null;
  submittedAt: string | null;
  publishedAt: string | null;
  createdAt: string;
}

export interface Package {
  id: string;
  appId: string;
  name: string;
  slug: string;
  description: string;
  riskTier: string;
  runtimeUrl: string;
  latestVersionId: string | null;
  publishedVersionId: string | null;
  status: string;
  suspension: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  versions?: Version[];
}

export interface Check {
  id: string;
  passed: boolean;
  points: number;
  max: number;
  detail: string;
}

export interface Dimension {
  score: number;
  max: number;
  ran: boolean;
  checks: Check[];
}

export const DIMENSIONS: Array<{ key: string; label: string }> = [
  { key: 'schema', label: 'Schema' },
  { key: 'contracts', label: 'Contracts' },
  { key: 'documentation', label: 'Documentation' },
  { key: 'performance', label: 'Performance' },
  { key: 'error_handling', label: 'Error handling' },
  { key: 'security', label: 'Security' },
];

/** A conformance run (`GET /v1/providers/conformance/:id`) or the answer of a quick validation. */
export interface ConformanceRun {
  id: string;
  full: boolean;
  status?: string;
  score: number | null;
  passed: boolean | null;
  dimensions: Record<string, Dimension> | null;
  error?: string | null;
  createdAt?: string;
  completedAt?: string | null;
}

export { WEBHOOK_EVENT_TYPES } from '../../src/modules/webhooks/webhook-contract';

export type { WebhookProfileDto as WebhookProfile } from '../../src/modules/webhooks/webhook-contract';

export interface DeliverySummary {
  id: string;
  event_id: string;
  event_type: string;
  idempotency_key: string;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  replay_of: string | null;
  test: boolean;
  delivered_at: string | null;
  failed_at: string | null;
  created_at: string;
}

export interface DeliveryAttempt {
  attempt: number;
  started_at: string;
  request_headers: Record<string, string>;
  status_code: number | null;
  latency_ms: number | null;
  response_body: string | null;
  error_class: string | null;
  outcome: string;
}

export interface Delivery extends DeliverySummary {
  payload: unknown;
  attempts: DeliveryAttempt[];
}
