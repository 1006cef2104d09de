import { Global, Module } from '@nestjs/common';
import { WebhookSecretSource } from '../conformance/webhook-receivers';
import { WebhookProfiles } from './webhook-profiles.service';
import { WebhooksModule } from './webhooks.module';

/**
 * Implements conformance's `WebhookSecretSource` port with the webhook
 * profiles, for both roles (the api starts full runs, the worker runs them).
 * Global because the port's user, conformance, sits below the webhooks area
 * (webhooks → packages → conformance): importing this module from there would
 * close a circle. Registered once, in `src/areas.ts`.
 */
@Global()
@Module({
  imports: [WebhooksModule],
  providers: [{ provide: WebhookSecretSource, useExisting: WebhookProfiles }],
  exports: [WebhookSecretSource],
})
export class WebhookSecretSourceModule {}
