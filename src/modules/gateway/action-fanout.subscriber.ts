import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { CONFIRMATION_DECIDED, CONFIRMATION_REQUESTED } from '../runtime-bridge/action-confirmations.service';

/** Gateway events of confirmations waiting for the user and of their decisions (docs/events.md). */
export const ACTION_PENDING = 'action.pending';
export const ACTION_DECIDED = 'action.decided';

/**
 * Tells every session of the user about a new pending confirmation, and
 * about its decision (worker role, from the outbox), whoever started the action: an app acting for the
 * user has no screen of its own to ask on. A confirmation that lapsed before
 * the dispatch is not announced. A Redis outage makes the publish throw, so
 * the dispatcher retries the event; the client keys confirmations by id.
 */
@Injectable()
export class PendingActionFanout {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly bus: GatewayBus,
  ) {}

  @OnDomainEvents(CONFIRMATION_REQUESTED)
  async fanOut(events: DomainEvent[]): Promise<void> {
    const now = Date.now();
    await Promise.all(
      events.flatMap((event) => {
        const { user_id: userId, confirmation } = event.payload as { user_id: string; confirmation: Record<string, unknown> };
        if (typeof confirmation?.expiresAt === 'string' && Date.parse(confirmation.expiresAt) <= now) return [];
        return [
          this.bus.publish(userChannel(this.config.redisPrefix, userId), { type: ACTION_PENDING, data: confirmation } satisfies BusEvent),
        ];
      }),
    );
  }

  /** A decision taken in one session (confirm claimed it, or cancel) removes the confirmation from the others. */
  @OnDomainEvents(CONFIRMATION_DECIDED)
  async fanOutDecisions(events: DomainEvent[]): Promise<void> {
    await Promise.all(
      events.map((event) => {
        const {
          user_id: userId,
          confirmation_id: confirmationId,
          status,
        } = event.payload as {
          user_id: string;
          confirmation_id: string;
          status: string;
        };
        return this.bus.publish(userChannel(this.config.redisPrefix, userId), {
          type: ACTION_DECIDED,
          data: { confirmationId, status },
        } satisfies BusEvent);
      }),
    );
  }
}
