import { Inject, Injectable } from '@nestjs/common';
import type { Tx } from '../../infra/database/sql-repository';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { DomainEvent, DomainEvents } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { InstallChange, InstallsService } from './installs.service';

/** Gateway event telling a user's sessions that one of their installs changed (docs/events.md). */
export const INSTALL_UPDATED = 'install.updated';
/** Outbox event of an install change, published to the user's sessions once the change has committed. */
const INSTALL_CHANGED = 'install.changed';

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
 * change is recorded in the outbox with it and told to the user's sessions as
 * `install.updated` once it has committed, so a client that reads the list
 * on that frame sees the change. A Redis outage makes the publish throw, so
 * the dispatcher retries that event alone (the updates are idempotent: a
 * retried change event records nothing twice, only rows that changed).
 */
@Injectable()
export class InstallChanges {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly installs: InstallsService,
    private readonly bus: GatewayBus,
    private readonly events: DomainEvents,
  ) {}

  @OnDomainEvents('package.published')
  async followPublished(events: DomainEvent[], manager: Tx): Promise<void> {
    const versionIds = events.map((event) => (event.payload as { data?: { version_id?: unknown } }).data?.version_id);
    await this.tell(
      manager,
      await this.installs.followPublished(
        manager,
        versionIds.filter((id): id is string => typeof id === 'string'),
      ),
    );
  }

  @OnDomainEvents('capability.failed')
  async markRefusedTokens(events: DomainEvent[], manager: Tx): Promise<void> {
    const installIds = events.flatMap((event) => {
      const data = (event.payload as { data?: { error_code?: unknown; install_id?: unknown } }).data;
      return typeof data?.error_code === 'string' && REFUSED_AFTER_REFRESH.has(data.error_code) && typeof data.install_id === 'string'
        ? [data.install_id]
        : [];
    });
    await this.tell(manager, await this.installs.requireReauthorization(manager, installIds));
  }

  /** Records the changes, in the transaction that makes them, for `publish` to tell once they have committed. */
  private async tell(manager: Tx, changes: InstallChange[]): Promise<void> {
    await this.events.recordMany(
      manager,
      changes.map((change) => ({
        type: INSTALL_CHANGED,
        payload: { user_id: change.user_id, reason: change.reason, install: change.install },
      })),
    );
  }

  @OnDomainEvents(INSTALL_CHANGED)
  async publish(events: DomainEvent[]): Promise<void> {
    await Promise.all(
      events.map((event) => {
        const { user_id: userId, reason, install } = event.payload as { user_id: string; reason: string; install: unknown };
        return this.bus.publish(userChannel(this.config.redisPrefix, userId), {
          type: INSTALL_UPDATED,
          data: { reason, install },
        } satisfies BusEvent);
      }),
    );
  }
}
