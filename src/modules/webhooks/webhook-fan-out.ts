import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../../common/ids';
import { outboxInsertFrom } from '../../infra/queue/job-outbox';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { WEBHOOK_EVENT_TYPES } from './dto/webhook.dto';
import { envelope } from './webhook-deliveries.service';
import { DRAIN_JOB } from './webhook-delivery.queue';

const DELIVERABLE = new Set<string>(WEBHOOK_EVENT_TYPES);

interface Subscription {
  app_id: string;
  event_types: string[];
  disabled: boolean;
}

/**
 * Turns a batch of outbox events into deliveries (worker role), set-based:
 * one query reads the profiles of every app in the batch, and one statement
 * writes every delivery row and, for each endpoint with new pending ones, its
 * drain job in the job outbox. All of it commits with the events being marked
 * dispatched, so a delivery exists exactly when its event was dispatched, and
 * a drain of its endpoint is queued whenever it is pending. A dispatch that runs again after a crash writes
 * no delivery twice (unique event per app); a second drain job finds nothing
 * to do.
 */
@Injectable()
export class WebhookFanOut {
  private readonly logger = new Logger(WebhookFanOut.name);

  @OnDomainEvents('*')
  async onEvents(events: DomainEvent[], manager: EntityManager): Promise<void> {
    const candidates: Array<{ event: DomainEvent; appId: string; data: Record<string, unknown> }> = [];
    for (const event of events) {
      if (!DELIVERABLE.has(event.type)) continue;
      const { app_id: appId, data } = event.payload as { app_id?: string; data?: Record<string, unknown> };
      if (!appId || !data) {
        this.logger.warn({ eventId: event.id, type: event.type }, 'webhook-able event without app_id or data; not delivered');
        continue;
      }
      candidates.push({ event, appId, data });
    }
    if (candidates.length === 0) return;

    const profiles: Subscription[] = await manager.query(
      `SELECT app_id, event_types, disabled_at IS NOT NULL AS disabled FROM webhook_profiles WHERE app_id = ANY($1)`,
      [[...new Set(candidates.map((c) => c.appId))]],
    );
    const byApp = new Map(profiles.map((p) => [p.app_id, p]));
    const rows = candidates.flatMap(({ event, appId, data }) => {
      const profile = byApp.get(appId);
      if (!profile || !(profile.event_types.includes('*') || profile.event_types.includes(event.type))) return [];
      const { body, idempotencyKey } = envelope({ eventId: event.id, type: event.type, createdAt: event.createdAt, appId, data });
      return [{ id: newId('dlv'), appId, eventId: event.id, type: event.type, idempotencyKey, body, disabled: profile.disabled }];
    });
    if (rows.length === 0) return;

    // One drain job per endpoint that got a pending delivery in this statement.
    const apps = [...new Set(rows.filter((r) => !r.disabled).map((r) => r.appId))];
    const jobs = outboxInsertFrom(
      DRAIN_JOB,
      {
        from: 'unnest($8::text[], $9::text[]) AS j(id, app_id)',
        idColumn: 'j.id',
        dataSql: `jsonb_build_object('appId', j.app_id)`,
        where: `EXISTS (SELECT 1 FROM written w WHERE w.app_id = j.app_id AND w.status = 'pending')`,
      },
      10,
    );
    await manager.query(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[])
                    AS t(id, app_id, event_id, event_type, idempotency_key, body, disabled)
       ), written AS (
         INSERT INTO webhook_deliveries (id, app_id, event_id, event_type, idempotency_key, body, status, last_error, failed_at)
         SELECT id, app_id, event_id, event_type, idempotency_key, body,
                CASE WHEN disabled THEN 'failed' ELSE 'pending' END,
                CASE WHEN disabled THEN 'endpoint_disabled' END,
                CASE WHEN disabled THEN now() END
           FROM input
         ON CONFLICT (event_id, app_id) WHERE replay_of IS NULL AND NOT test DO NOTHING
         RETURNING id, app_id, status
       )
       ${jobs.sql}`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.appId),
        rows.map((r) => r.eventId),
        rows.map((r) => r.type),
        rows.map((r) => r.idempotencyKey),
        rows.map((r) => r.body),
        rows.map((r) => r.disabled),
        apps.map(() => newId('job')),
        apps,
        ...jobs.params,
      ],
    );
  }
}
