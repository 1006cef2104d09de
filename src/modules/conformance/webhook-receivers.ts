import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppsService } from '../providers/apps.service';
import { WebhookProfiles } from '../webhooks/webhook-profiles.service';

/** An app's webhook endpoint as a full conformance run probes it. */
export interface WebhookReceiver {
  url: string;
  secret: string;
}

/**
 * Finds the webhook endpoint a full conformance run probes: the app's
 * `webhook_url` with the current signing secret of its webhook profile.
 * Looked up when the run starts (never carried in a job payload, so the
 * secret stays sealed at rest). The profiles belong to the webhooks area,
 * which imports the packages area (which imports this one), so the service is
 * resolved from the application context instead of a module import, which
 * would close that circle.
 */
@Injectable()
export class WebhookReceivers {
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly apps: AppsService,
  ) {}

  /** The endpoint, or undefined when the app has no webhook URL or no signing secret yet. */
  async forApp(appId: string): Promise<WebhookReceiver | undefined> {
    const target = await this.apps.webhookTarget(appId);
    if (!target?.webhook_url) return undefined;
    const secret = await this.moduleRef.get(WebhookProfiles, { strict: false }).currentSecret(appId);
    return secret ? { url: target.webhook_url, secret } : undefined;
  }
}
