import { Global, Module } from '@nestjs/common';
import { GatewayBus } from './gateway-bus';

/**
 * The gateway's Redis pub/sub, shared by every area: the gateway listens for
 * its sockets, messages publish on commit (the real-time fast path), the
 * worker publishes the durable copy and realtime capability data.
 */
@Global()
@Module({ providers: [GatewayBus], exports: [GatewayBus] })
export class RealtimeModule {}
