import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { AppsService } from '../providers/apps.service';
import { WebhookDeliveryQueue } from './webhook-delivery.queue';
import { SECRET_ROTATION_DAYS } from './webhook-profiles.service';

const SWEEP_BATCH = 1_000;

/** The periodic sweep: pending deliveries whose job was lost, and signing secrets due for rotation. */
@Injectable()
export class WebhookMaintenance {
  private readonly logger = new Logger(WebhookMaintenance.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly queue: WebhookDeliveryQueue,
    private readonly apps: AppsService,
    private readonly mail: MailOutbox,
  ) {}

  async sweep(): Promise<Record<string, number>> {
    return { deliveriesRequeued: await this.requeueLost(), rotationReminders: await this.remindRotation() };
  }

  /** At-least-once: every pending delivery has a job that a worker will run. */
  private async requeueLost(): Promise<number> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY next_attempt_at LIMIT $1`,
      [SWEEP_BATCH],
    );
    let requeued = 0;
    for (const row of rows) if (await this.queue.ensureLive(row.id)) requeued += 1;
    if (requeued > 0) this.logger.warn({ requeued }, 're-enqueued webhook deliveries whose job was lost');
    return requeued;
  }

  /** One reminder per secret older than the recommended rotation interval. */
  private async remindRotation(): Promise<number> {
    const due: Array<{ app_id: string }> = await this.dataSource.query(
      `SELECT app_id FROM webhook_profiles
        WHERE secret_rotated_at < now() - make_interval(days => $1) AND rotation_reminded_at IS NULL LIMIT 100`,
      [SECRET_ROTATION_DAYS],
    );
    for (const { app_id: appId } of due) {
      const target = await this.apps.webhookTarget(appId);
      await this.dataSource.transaction(async (manager) => {
        const [, updated]: [unknown, number] = await manager.query(
          `UPDATE webhook_profiles SET rotation_reminded_at = now() WHERE app_id = $1 AND rotation_reminded_at IS NULL`,
          [appId],
        );
        if (updated === 0 || !target) return;
        await this.mail.enqueue(manager, {
          to: target.developer_email,
          subject: 'Rotate your webhook signing secret',
          text: `The webhook signing secret of app ${appId} is older than ${SECRET_ROTATION_DAYS} days. Rotate it with POST /v1/providers/apps/${appId}/webhook/secret; the previous secret keeps signing in X-Service-Signature-Previous during the grace period.`,
        });
      });
    }
    return due.length;
  }
}
