import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** An accepted inbound event: its id and when it was received. */
export interface ReceivedEvent {
  id: string;
  receivedAt: Date;
}

/** A signed provider event to keep, identified for de-duplication by app, type, occurrence time and body hash. */
export interface InboundEventInput {
  id: string;
  appId: string;
  eventType: string;
  action: string;
  userId: string;
  occurredAt: Date;
  bodySha256: string;
  data: unknown;
}

interface ReceivedRow {
  id: string;
  received_at: Date;
}

const toReceived = (row: ReceivedRow): ReceivedEvent => ({ id: row.id, receivedAt: row.received_at });

/** The only reader and writer of `inbound_webhook_events`. */
@Injectable()
export class InboundWebhookEventsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Keeps the event; null when the same event (app, type, time, body) was kept before. */
  async insertOnce(tx: Tx, event: InboundEventInput): Promise<ReceivedEvent | null> {
    const row = await this.first<ReceivedRow>(
      `INSERT INTO inbound_webhook_events (id, app_id, event_type, action, user_id, occurred_at, body_sha256, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (app_id, event_type, occurred_at, body_sha256) DO NOTHING RETURNING id, received_at`,
      [event.id, event.appId, event.eventType, event.action, event.userId, event.occurredAt, event.bodySha256, JSON.stringify(event.data)],
      tx,
    );
    return row ? toReceived(row) : null;
  }

  /** Deletes what providers sent about these users (their accounts were erased); answers how many events went. */
  async deleteForUsers(tx: Tx, userIds: string[]): Promise<number> {
    const { count } = await this.changed(`DELETE FROM inbound_webhook_events WHERE user_id = ANY($1::text[])`, [userIds], tx);
    return count;
  }

  /** The event kept first for the same app, type, time and body. */
  async findSame(tx: Tx, event: Pick<InboundEventInput, 'appId' | 'eventType' | 'occurredAt' | 'bodySha256'>): Promise<ReceivedEvent> {
    const row = await this.first<ReceivedRow>(
      `SELECT id, received_at FROM inbound_webhook_events WHERE app_id = $1 AND event_type = $2 AND occurred_at = $3 AND body_sha256 = $4`,
      [event.appId, event.eventType, event.occurredAt, event.bodySha256],
      tx,
    );
    return toReceived(row!);
  }
}
