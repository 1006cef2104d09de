import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { INSTALL_TARGETS_CHANNEL } from '../../infra/database/change-channels';
import { NotifiedCache } from '../../infra/database/notified-cache';
import { InstallsRepository, TargetRow } from './installs.repository';

/** Longest a target is trusted without asking PostgreSQL again, in case a notification went missing. */
export const INSTALL_TARGET_TTL_MS = 10_000;
const TARGETS_KEPT = 20_000;

/** A remembered row is handed to every caller: frozen, so none can change it for the others. */
function shared(row: TargetRow): TargetRow {
  Object.freeze(row.scopes);
  return Object.freeze(row);
}

/**
 * What the runtime bridge reads on every call to reach a runtime for an
 * active install (the install, its package and live version's runtime URL,
 * the suspensions, the app's tier), remembered per application instance for
 * up to `INSTALL_TARGET_TTL_MS`, as the session cache and the app token
 * standings are. Entries are owned by the package and dropped:
 *
 * - in this instance right after the commit of a change, by the repositories
 *   that write installs, packages, developers' status and apps' tier
 *   (`SqlRepository.forgetAfterTransaction`), so an uninstall or a suspension
 *   holds for the very next call;
 * - in every instance, by the `install_targets_changed` triggers' notification
 *   (migration `InstallTargetsInvalidation`), whoever made the change.
 *
 * An absent answer (no such active install) is never remembered, so a new
 * install is callable at once.
 */
@Injectable()
export class InstallTargets implements OnApplicationShutdown {
  private readonly targets: NotifiedCache<TargetRow>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    private readonly installs: InstallsRepository,
  ) {
    this.targets = new NotifiedCache({
      databaseUrl: config.databaseUrl,
      channel: INSTALL_TARGETS_CHANNEL,
      ttlMs: INSTALL_TARGET_TTL_MS,
      max: TARGETS_KEPT,
      logger: new Logger(InstallTargets.name),
      scope: dataSource,
    });
  }

  /** The active install's target by install id. */
  byInstall(installId: string): Promise<TargetRow | null> {
    return this.targets.get(`i ${installId}`, null, async () => {
      const [row] = await this.installs.executionTargetById(installId);
      return row ? { value: shared(row), owner: row.package_id } : null;
    });
  }

  /** The user's active install of a package. */
  byUser(userId: string, packageId: string): Promise<TargetRow | null> {
    return this.targets.get(`u ${userId} ${packageId}`, packageId, async () => {
      const [row] = await this.installs.executionTargetForUser(userId, packageId);
      return row ? { value: shared(row) } : null;
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.targets.stop();
  }
}
