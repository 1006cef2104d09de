import { Injectable } from '@nestjs/common';
import { AppsService } from '../providers/apps.service';

/** An app's webhook endpoint as a full conformance run probes it. */
export interface WebhookReceiver {
  url: string;
  secret: string;
}

/**
 * Where a full run finds an app's current webhook signing secret: a port the
 * webhooks area implements (`WebhookSecretSourceModule` binds it to the
 * webhook profiles). The profiles belong to the webhooks area, which imports
 * the packages area, which imports this one; conformance therefore names only
 * what it needs, and the dependency points from webhooks to here.
 */
export abstract class WebhookSecretSource {
  /** The app's current signing secret, opened; null when it has no webhook profile. */
  abstract currentSecret(appId: string): Promise<string | null>;
}

/**
 * Finds the webhook endpoint a full conformance run probes: the app's
 * `webhook_url` with the current signing secret of its webhook profile.
 * Looked up when the run starts (never carried in a job payload, so the
 * secret stays sealed at rest).
 */
@Injectable()
export class WebhookReceivers {
  constructor(
    private readonly secrets: WebhookSecretSource,
    private readonly apps: AppsService,
  ) {}

  /** The endpoint, or undefined when the app has no webhook URL or no signing secret yet. */
  async forApp(appId: string): Promise<WebhookReceiver | undefined> {
    const target = await this.apps.webhookTarget(appId);
    if (!target?.webhook_url) return undefined;
    const secret = await this.secrets.currentSecret(appId);
    return secret ? { url: target.webhook_url, secret } : undefined;
  }
}
