/**
 * The capability descriptor vocabulary. A plain file (no imports, no Node, no
 * npm package): the browser pages import it directly, as they do
 * component-contracts.ts, so nothing here may pull in ajv or Node.
 */

/** Vocabulary of capability descriptors (spec: Capability descriptor, Surface guidance). */
export const CAPABILITY_MODES = ['state', 'action', 'history', 'realtime', 'webhook'] as const;
export const INTENTS = ['ambient_context', 'actionable_insight', 'notification', 'deep_dive'] as const;
export const PLACEMENTS = ['home_widgets', 'daily_brief', 'service_context', 'connection_profile'] as const;
export const COMPONENTS = ['stat_row', 'sparkline', 'ranked_list', 'action_row', 'progress_bar', 'cta_banner', 'meeting_prep'] as const;
export const RISK_TIERS = ['data_only', 'action_capable', 'high_trust', 'strategic_surface'] as const;

export type CapabilityMode = (typeof CAPABILITY_MODES)[number];
export type Intent = (typeof INTENTS)[number];
export type Placement = (typeof PLACEMENTS)[number];
export type Component = (typeof COMPONENTS)[number];
export type RiskTier = (typeof RISK_TIERS)[number];

/** A JSON Schema object as providers write it. */
export type JsonSchema = Record<string, unknown>;

export interface WebhookEventType {
  type: string;
  description: string;
  schema: JsonSchema;
}

/** The one stored form every accepted descriptor (full or short) is normalised to. */
export interface CapabilityDescriptor {
  name: string;
  type: CapabilityMode;
  description: string;
  /**
   * HTTPS base URL of the runtime the service calls for this capability
   * (`<runtimeUrl>/capabilities/<name>/execute|stream`): the capability's own,
   * else the package's or version's. Absent on `webhook` capabilities that
   * name none, and before any runtime is declared.
   */
  runtimeUrl?: string;
  /** Seconds between polls (`state`). */
  refreshInterval?: number;
  /** Seconds between heartbeats (`realtime`). */
  heartbeatInterval?: number;
  /** Params/input schema (`type: object`). */
  schema: JsonSchema;
  /** Optional schema of the runtime's `data`/`result`/item objects. */
  responseSchema?: JsonSchema;
  surfaceGuidance: {
    intent: Intent;
    placement: Placement[];
    preferredComponents: Component[];
    /** Widget heading (docs/components.md); absent: the capability name made readable. */
    title?: string;
    /** How components show the data's top-level fields, by field name (docs/components.md). */
    fields?: Record<string, SurfaceField>;
  };
  /** Event types a `webhook` capability may push, each with the schema of its `data`. */
  events?: WebhookEventType[];
  examples?: unknown[];
}

/** How one field of a capability's data is shown (`surfaceGuidance.fields`, docs/components.md). */
export interface SurfaceField {
  label?: string;
  unit?: string;
  format?: FieldFormat;
  hidden?: boolean;
}
export const FIELD_FORMATS = ['number', 'integer', 'percent', 'currency', 'date', 'datetime', 'text'] as const;
export type FieldFormat = (typeof FIELD_FORMATS)[number];

/** Components the spec lists as typical for each mode; used by documentation checks and surfaces. */
export const TYPICAL_COMPONENTS: Record<CapabilityMode, Component[]> = {
  state: ['stat_row', 'sparkline', 'progress_bar'],
  action: ['action_row', 'cta_banner'],
  history: ['ranked_list', 'sparkline'],
  realtime: ['sparkline', 'stat_row'],
  webhook: ['meeting_prep', 'action_row'],
};

/**
 * A capability name goes into one segment of the runtime path
 * (`<runtimeUrl>/capabilities/<name>/execute`), so it may hold only characters
 * that need no percent-encoding there (RFC 3986 unreserved: letters, digits,
 * `-`, `.`, `_`, `~`), and may not be `.` or `..`, which a path resolves away.
 * That is the only naming rule.
 */
const PATH_SEGMENT = /^[A-Za-z0-9._~-]{1,128}$/;
export const CAPABILITY_NAME_RULE =
  'must be 1 to 128 letters, digits, "-", ".", "_" or "~", and not "." or ".." (the name is one segment of the runtime path <runtimeUrl>/capabilities/<name>/execute)';
export function isPathSafeName(name: string): boolean {
  return PATH_SEGMENT.test(name) && name !== '.' && name !== '..';
}

/** Defaults of the optional descriptor fields (docs/descriptor.md lists them). */
export const DEFAULT_REFRESH_INTERVAL_SECONDS = 300;
export const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 30;
export const DEFAULT_SURFACE_GUIDANCE: Record<CapabilityMode, { intent: Intent; placement: Placement[] }> = {
  state: { intent: 'ambient_context', placement: ['home_widgets'] },
  action: { intent: 'actionable_insight', placement: ['service_context'] },
  history: { intent: 'deep_dive', placement: ['service_context'] },
  realtime: { intent: 'ambient_context', placement: ['home_widgets'] },
  webhook: { intent: 'notification', placement: ['daily_brief'] },
};
