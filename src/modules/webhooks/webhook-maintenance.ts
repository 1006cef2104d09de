import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { AppsService } from '../providers/apps.service';
import { WebhookProfilesRepository } from './webhook-profiles.repository';
import { SECRET_ROTATION_DAYS } from './webhook-profiles.service';

/** The periodic webhook sweep: signing secrets due for rotation. (Lost delivery jobs are the job relay's sweep.) */
@Injectable()
export class WebhookMaintenance {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly profiles: WebhookProfilesRepository,
    private readonly apps: AppsService,
    private readonly mail: MailOutbox,
  ) {}

  async sweep(): Promise<Record<string, number>> {
    return { rotationReminders: await this.remindRotation() };
  }

  /** One reminder per secret older than the recommended rotation interval. */
  private async remindRotation(): Promise<number> {
    const due = await this.profiles.dueForRotationReminder(SECRET_ROTATION_DAYS);
    for (const appId of due) {
      const target = await this.apps.webhookTarget(appId);
      await this.dataSource.transaction(async (manager) => {
        const reminded = await this.profiles.markRotationReminded(manager, appId);
        if (!reminded || !target) return;
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
