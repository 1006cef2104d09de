import type { EntityManager } from 'typeorm';

/**
 * What giving an app a `webhook_url` sets up: a webhook profile with its
 * signing secret (spec: a webhook profile is the event types, the target URL,
 * `webhook_secret` and a timeout). The webhooks area owns profiles and
 * imports this module, so it plugs itself in here at start-up
 * (`AppsService.useWebhookSetup`) rather than this module importing it.
 */
export interface AppWebhookSetup {
  /**
   * Creates the app's profile (every event type, default timeout) when it has
   * none, in the caller's transaction. Answers the new signing secret, to be
   * shown once, or null when the app already had a profile.
   */
  ensureProfile(manager: EntityManager, appId: string): Promise<string | null>;
}
