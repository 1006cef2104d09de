/**
 * The provider platform's answers as the console uses them: names for the generated schema types
 * (packages/api-client/src/api-schema.d.ts, from the OpenAPI document), and the few lists the console shows as choices.
 */
import type { Schemas } from '../shared/api';

export type Account = Schemas['AccountDto'];

/** `client_secret` only in the answer to creation and rotation; `webhook_secret` only when the app got its first `webhook_url`. */
export type App = Schemas['AppDto'];

// The platform's scope list itself, so the console's choices cannot drift from what the API accepts.
export { PLATFORM_SCOPES } from '../../src/modules/providers/scopes';

export { RISK_TIERS } from '../../packages/rules/src/descriptors/capability-descriptor';

export type Version = Schemas['VersionDto'];

export type Package = Schemas['PackageDto'];

type RunDto = Schemas['ConformanceRunDto'];

export type Dimension = NonNullable<RunDto['dimensions']>[string];

export type Check = Dimension['checks'][number];

export const DIMENSIONS: Array<{ key: string; label: string }> = [
  { key: 'schema', label: 'Schema' },
  { key: 'contracts', label: 'Contracts' },
  { key: 'documentation', label: 'Documentation' },
  { key: 'performance', label: 'Performance' },
  { key: 'error_handling', label: 'Error handling' },
  { key: 'security', label: 'Security' },
];

/** A conformance run (`GET /v1/providers/conformance/:id`) or the answer of a quick validation (`LocalValidationResultDto`). */
export type ConformanceRun = Pick<RunDto, 'id' | 'full' | 'score' | 'passed' | 'dimensions'> &
  Partial<Pick<RunDto, 'status' | 'error' | 'createdAt' | 'completedAt'>>;

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../src/modules/webhooks/webhook-contract';

export type WebhookProfile = Schemas['WebhookProfileResponseDto'];

export type DeliverySummary = Schemas['DeliverySummaryDto'];

export type DeliveryAttempt = Schemas['DeliveryAttemptDto'];

export type Delivery = Schemas['DeliveryDetailDto'];
