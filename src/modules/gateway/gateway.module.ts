import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AuthModule } from '../auth/auth.module';
import { ContactsModule } from '../contacts/contacts.module';
import { MarketplaceModule } from '../marketplace/marketplace.module';
import { RuntimeBridgeModule } from '../runtime-bridge/runtime-bridge.module';
import { MessagesModule } from '../messages/messages.module';
import { PackagesModule } from '../packages/packages.module';
import { GatewayController } from './gateway.controller';
import { GatewayConnections } from './gateway-connections.service';
import { GatewayFrames } from './gateway-frames.service';
import { Presence } from './presence.service';
import { RealtimeGateway } from './realtime.gateway';

/**
 * Real-time gateway of the api role (WebSocket at `/v1/gateway`). The worker
 * side (MessageFanout, publishing `message.created` to Redis) is registered in
 * WorkerModule's subscribers; this module only delivers.
 */
@Module({
  imports: [AccessModule, AuthModule, ContactsModule, MessagesModule, MarketplaceModule, PackagesModule, RuntimeBridgeModule],
  controllers: [GatewayController],
  providers: [RealtimeGateway, GatewayConnections, GatewayFrames, Presence],
})
export class GatewayModule {}
