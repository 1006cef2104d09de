import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../../config/config.module';
import type { AppConfig } from '../../../config/app-config';
import { NotifiedCache } from '../../../infra/database/notified-cache';
import { CacheFence } from '../../../infra/realtime/cache-fence';
import { AppsRepository } from '../apps.repository';
import type { PlatformStanding } from './platform-access';

/** PostgreSQL channel on which triggers announce changes to a developer's status, verification or apps (payload: developer id). */
export const PLATFORM_AUTH_CHANNEL = 'platform_auth_changed';
/** Longest a checked app token is trusted without asking PostgreSQL again, in case a notification went missing. */
export const PLATFORM_CHECK_TTL_MS = 10_000;
const CHECKS_KEPT = 20_000;

/** The claims of an app token that decide what it stands on. */
export interface AppTokenStanding {
  developerId: string;
  appId: string;
  secretGeneration?: number;
  installId?: string;
  userId?: string;
}

/**
 * What an app token stands on (its developer's status and verification, the
 * app's current scopes, its client secret generation still holding), checked
 * on every provider platform call and every bridge call: remembered per api
 * instance for up to `PLATFORM_CHECK_TTL_MS`, as the session cache does for
 * users. Entries are owned by the developer and dropped at once in this
 * process by the services that change them (suspension, reinstatement,
 * verification, app updates, secret rotation) and in every process by the
 * `platform_auth_changed` triggers. A token of a previous secret generation
 * is trusted no longer than its grace period.
 *
 * Not remembered: console tokens (developer sessions; low volume) and tokens
 * delegated by a user's install, whose install can end inside any of the
 * transactions that remove installs (uninstall, soul deletion, suspension):
 * those ask PostgreSQL on every call, as before.
 */
@Injectable()
export class PlatformStandings implements OnApplicationShutdown {
  private readonly checked: NotifiedCache<PlatformStanding>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly apps: AppsRepository,
    fence: CacheFence,
  ) {
    this.checked = new NotifiedCache({
      databaseUrl: config.databaseUrl,
      channel: PLATFORM_AUTH_CHANNEL,
      ttlMs: PLATFORM_CHECK_TTL_MS,
      max: CHECKS_KEPT,
      logger: new Logger(PlatformStandings.name),
      fence,
    });
  }

  async forApp(token: AppTokenStanding): Promise<PlatformStanding | null> {
    if (token.installId !== undefined) return this.apps.appStanding(token);
    // Everything the answer depends on: the developer (whose status it reads), the app and the secret generation.
    const key = `${token.developerId} ${token.appId} ${token.secretGeneration ?? ''}`;
    return this.checked.get(key, token.developerId, async () => {
      const row = await this.apps.appStanding(token);
      if (!row) return null;
      const { trusted_until: until, ...standing } = row;
      return { value: standing, ttlMs: until ? until.getTime() - Date.now() : undefined };
    });
  }

  /** Drops what this process remembers about a developer's tokens; call after committing a change to the developer or their apps. */
  forgetDeveloper(developerId: string): void {
    this.checked.forgetOwner(developerId);
  }

  /**
   * As `forgetDeveloper`, and resolves once every instance has dropped the
   * developer too: for a revocation (suspension, a rotated secret, scopes
   * taken away), awaited before the answer (see `CacheFence`).
   */
  async forgetDeveloperEverywhere(developerId: string): Promise<void> {
    this.checked.forgetOwner(developerId);
    await this.checked.fence();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.checked.stop();
  }
}
