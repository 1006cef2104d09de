import { Injectable, Logger } from '@nestjs/common';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { Sessions } from '../access/sessions.service';
import { DomainEvents } from '../events/domain-events';
import { VersionLifecycle } from '../packages/version-lifecycle.service';
import { ExportsService } from '../privacy/exports.service';
import { ExecutionTraces } from '../runtime-bridge/execution-traces.service';
import { AppEvents } from '../webhooks/app-events.service';

/** How long dispatched outbox rows are kept for inspection before they are purged. */
export const DISPATCHED_EVENT_RETENTION_DAYS = 7;

/**
 * Housekeeping run by the `system` queue: deletes rows whose useful life is
 * over (hourly). Work whose job was lost is the job relay's sweep, not this. Each
 * area owns its tables; this only calls the areas' own purge methods.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);

  constructor(
    private readonly events: DomainEvents,
    private readonly sessions: Sessions,
    private readonly idempotency: Idempotency,
    private readonly exports: ExportsService,
    private readonly mail: MailOutbox,
    private readonly packages: VersionLifecycle,
    private readonly traces: ExecutionTraces,
    private readonly appEvents: AppEvents,
  ) {}

  async purgeExpired(): Promise<Record<string, number>> {
    const exports = await this.exports.purgeExpired();
    const counts = {
      eventsPurged: await this.purgeDispatchedEvents(),
      sessionsPurged: await this.sessions.purgeEnded(),
      idempotencyKeysPurged: await this.idempotency.purgeExpired(),
      mailPurged: await this.mail.purgeDelivered(),
      packagesSuspendedForInactivity: await this.packages.suspendInactive(),
      executionTracesPurged: await this.traces.purgeOld(),
      appEventsPurged: await this.appEvents.purgeOld(),
      ...exports,
    };
    this.logger.log(counts, 'purged expired rows');
    return counts;
  }

  private purgeDispatchedEvents(): Promise<number> {
    return this.events.purgeDispatched(DISPATCHED_EVENT_RETENTION_DAYS);
  }
}
