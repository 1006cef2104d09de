import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { AppsService } from '../providers/apps.service';
import { SECRET_ROTATION_DAYS } from './webhook-profiles.service';

/** The periodic webhook sweep: signing secrets due for rotation. (Lost delivery jobs are the job relay's sweep.) */
@Injectable()
export class WebhookMaintenance {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly apps: AppsService,
    private readonly mail: MailOutbox,
  ) {}

  async sweep(): Promise<Record<string, number>> {
    return { rotationReminders: await this.remindRotation() };
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
