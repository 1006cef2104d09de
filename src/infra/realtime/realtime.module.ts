import { Global, Module } from '@nestjs/common';
import { GatewayBus } from './gateway-bus';
import { CacheFence } from './cache-fence';

/**
 * The gateway's Redis pub/sub, shared by every area: the gateway listens for
 * its sockets, messages publish on commit (the real-time fast path), the
 * worker publishes the durable copy and realtime capability data; and the
 * fence that lets a revocation wait until every instance has seen it.
 */
@Global()
@Module({ providers: [GatewayBus, CacheFence], exports: [GatewayBus, CacheFence] })
export class RealtimeModule {}
