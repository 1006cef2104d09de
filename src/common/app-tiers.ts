/**
 * The provider platform's app tiers and what each allows (spec: Limits,
 * provider platform). A leaf with no domain imports: the runtime bridge (per
 * capability limits, runtime timeouts) and webhooks (inbound events per
 * minute) both read it, so neither area imports the other for it.
 */
/** Free unless an operator moves the app. */
export const APP_TIERS = ['free', 'pro', 'enterprise'] as const;
export type AppTier = (typeof APP_TIERS)[number];
/** The tier a platform caller's app is on (the same tiers). */
export type PlatformTier = AppTier;

export interface TierLimits {
  statePerMinute: number;
  actionPerMinute: number;
  historyPerMinute: number;
  realtimeConnections: number;
  /** Inbound provider events (POST /v1/providers/runtime/webhook) per app per minute. */
  webhookEventsPerMinute: number;
  /** Runtime response timeout at the default RUNTIME_TIMEOUT_MS (see `runtimeTimeoutMs` in runtime-bridge/bridge-limits). */
  timeoutMs: number;
  maxResponseBytes: number;
}

/** Provider platform limits per tier (spec: Limits, provider platform). */
export const TIER_LIMITS: Record<PlatformTier, TierLimits> = {
  free: {
    statePerMinute: 100,
    actionPerMinute: 20,
    historyPerMinute: 50,
    realtimeConnections: 2,
    webhookEventsPerMinute: 200,
    timeoutMs: 10_000,
    maxResponseBytes: 256 * 1024,
  },
  pro: {
    statePerMinute: 1_000,
    actionPerMinute: 200,
    historyPerMinute: 500,
    realtimeConnections: 10,
    webhookEventsPerMinute: 2_000,
    timeoutMs: 15_000,
    maxResponseBytes: 1024 * 1024,
  },
  enterprise: {
    statePerMinute: 10_000,
    actionPerMinute: 2_000,
    historyPerMinute: 5_000,
    realtimeConnections: 100,
    webhookEventsPerMinute: 20_000,
    timeoutMs: 30_000,
    maxResponseBytes: 5 * 1024 * 1024,
  },
};

/** The limits of an app's tier (`apps.tier`, Free until an operator moves it); Free for a value that is not a tier. */
export function tierLimits(tier: string | null | undefined): TierLimits {
  return Object.prototype.hasOwnProperty.call(TIER_LIMITS, tier ?? '') ? TIER_LIMITS[tier as PlatformTier] : TIER_LIMITS.free;
}
