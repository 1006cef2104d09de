import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { AppsService } from '../providers/apps.service';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { SECRET_ROTATION_DAYS } from './webhook-profiles.service';

/** The periodic webhook sweep: signing secrets due for rotation. (Lost delivery jobs are the job relay's sweep.) */
@Injectable()
export class WebhookMaintenance {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly apps: AppsService,
    private readonly mail: MailOutbox,
  ) {}

  async sweep(): Promise<Record<string, number>> {
    return { rotationReminders: await this.remindRotation() };
  }

  /** One reminder per endpoint whose secret is older than the recommended rotation interval. */
  private async remindRotation(): Promise<number> {
    const due = await this.endpoints.dueForRotationReminder(SECRET_ROTATION_DAYS);
    for (const { id, app_id: appId, is_primary: primary } of due) {
      const target = await this.apps.webhookTarget(appId);
      // The spec's profile keeps the route its reminder always named; another endpoint is named by its own.
      const route = primary ? `/v1/providers/apps/${appId}/webhook/secret` : `/v1/providers/apps/${appId}/webhook/endpoints/${id}/secret`;
      await this.dataSource.transaction(async (manager) => {
        const reminded = await this.endpoints.markRotationReminded(manager, id);
        if (!reminded || !target) return;
        await this.mail.enqueue(manager, {
          to: target.developer_email,
          subject: 'Rotate your webhook signing secret',
          text: `The webhook signing secret of app ${appId}${primary ? '' : ` for endpoint ${id}`} is older than ${SECRET_ROTATION_DAYS} days. Rotate it with POST ${route}; the previous secret keeps signing in X-Service-Signature-Previous during the grace period.`,
        });
      });
    }
    return due.length;
  }
}
