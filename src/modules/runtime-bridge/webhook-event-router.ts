import { Injectable } from '@nestjs/common';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { InstallsService } from '../marketplace/installs.service';
import { PROVIDER_EVENT_RECEIVED } from '../webhooks/inbound-webhooks.service';
import { RealtimeSubscriptions } from './realtime-subscriptions.service';
import { StateCache } from './state-cache';

/**
 * Webhook mode: an event a provider pushed (accepted and validated by the
 * inbound webhook endpoint) is processed like the other modes' data. For each
 * of the user's installs of that app whose `webhook` capability registered the
 * event type, it becomes the capability's latest state for surfaces and is
 * relayed to the user's gateway connections on the capability channel.
 */
@Injectable()
export class WebhookEventRouter {
  constructor(
    private readonly bus: GatewayBus,
    private readonly installs: InstallsService,
    private readonly cache: StateCache,
    private readonly subscriptions: RealtimeSubscriptions,
  ) {}

  @OnDomainEvents(PROVIDER_EVENT_RECEIVED)
  async routeAll(events: DomainEvent[]): Promise<void> {
    for (const event of events) await this.route(event);
  }

  private async route(event: DomainEvent): Promise<void> {
    const {
      app_id: appId,
      user_id: userId,
      event: type,
      action,
      event_id: eventId,
      occurred_at: occurredAt,
      data,
    } = event.payload as {
      app_id: string;
      user_id: string;
      event: string;
      action: string;
      event_id: string;
      occurred_at: string;
      data: Record<string, unknown>;
    };
    const targets = (await this.installs.activeTargets(userId)).filter((t) => t.app_id === appId && !t.package_suspended);
    for (const target of targets) {
      const capability = target.capabilities.find((c) => c.type === 'webhook' && c.events?.some((e) => e.type === type));
      if (!capability) continue;
      await this.cache.store(target.install_id, capability.name, {
        data,
        params: {},
        ttl: 0,
        metadata: { source: 'webhook', event: type, action, eventId },
        fetchedAt: occurredAt,
        degraded: false,
        source: 'webhook',
      });
      await this.bus.publish(this.subscriptions.channel(target.install_id, capability.name), {
        type: 'data',
        installId: target.install_id,
        userId,
        capability: capability.name,
        data,
        at: new Date().toISOString(),
      });
    }
  }
}
