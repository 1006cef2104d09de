import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { InstallChange, InstallsService } from './installs.service';

/** Gateway event telling a user's sessions that one of their installs changed (docs/events.md). */
export const INSTALL_UPDATED = 'install.updated';

/**
 * Runtime error codes that reach a failure only after the bridge refreshed the
 * install's token and the runtime refused the fresh one too: the second
 * `AUTH_EXPIRED`, reported as the runtime's code or as the problem it became.
 */
const REFUSED_AFTER_REFRESH = new Set(['AUTH_EXPIRED', 'reauthorization_required']);

/**
 * What happens to installs outside the user's requests (worker role, from the
 * event outbox): a published version moves them forward or waits on them for
 * consent (docs/decisions.md, "upgrade rule"), and a runtime that refuses a
 * freshly issued token marks the install as needing re-authorization. Each
 * change is told to the user's sessions as `install.updated`; the install list
 * and the app show it after a reload too. A Redis outage makes the publish
 * throw, so the dispatcher retries the event (the updates are idempotent and
 * a retry publishes nothing twice: only rows that changed are told).
 */
@Injectable()
export class InstallChanges {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly installs: InstallsService,
    private readonly bus: GatewayBus,
  ) {}

  @OnDomainEvents('package.published')
  async followPublished(events: DomainEvent[], manager: EntityManager): Promise<void> {
    const versionIds = events.map((event) => (event.payload as { data?: { version_id?: unknown } }).data?.version_id);
    await this.tell(
      await this.installs.followPublished(
        manager,
        versionIds.filter((id): id is string => typeof id === 'string'),
      ),
    );
  }

  @OnDomainEvents('capability.failed')
  async markRefusedTokens(events: DomainEvent[], manager: EntityManager): Promise<void> {
    const installIds = events.flatMap((event) => {
      const data = (event.payload as { data?: { error_code?: unknown; install_id?: unknown } }).data;
      return typeof data?.error_code === 'string' && REFUSED_AFTER_REFRESH.has(data.error_code) && typeof data.install_id === 'string'
        ? [data.install_id]
        : [];
    });
    await this.tell(await this.installs.requireReauthorization(manager, installIds));
  }

  private async tell(changes: InstallChange[]): Promise<void> {
    await Promise.all(
      changes.map((change) =>
        this.bus.publish(userChannel(this.config.redisPrefix, change.user_id), {
          type: INSTALL_UPDATED,
          data: { reason: change.reason, install: change.install },
        } satisfies BusEvent),
      ),
    );
  }
}
