import { WsAdapter } from '@nestjs/platform-ws';
import type { MessageMappingProperties } from '@nestjs/websockets';
import type { Observable } from 'rxjs';

/**
 * Nest's `ws` adapter, without Nest's own frame dispatch when a gateway
 * declares no `@SubscribeMessage` handler. RealtimeGateway reads its frames
 * itself (one at a time per connection, after the session check), so Nest's
 * dispatch found nothing to call; it still parsed every inbound frame as JSON a
 * second time and threw and caught a TypeError per frame looking for a
 * handler, and held rxjs subscriptions for every socket (docs/performance.md,
 * "Issue 16: the gateway at its target rate").
 */
export class GatewayWsAdapter extends WsAdapter {
  override bindMessageHandlers(
    client: unknown,
    handlers: MessageMappingProperties[],
    transform: (data: unknown) => Observable<unknown>,
  ): void {
    if (handlers.length === 0) return;
    super.bindMessageHandlers(client, handlers, transform);
  }
}
