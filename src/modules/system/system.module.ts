import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { AccessModule } from '../access/access.module';
import { PackagesModule } from '../packages/packages.module';
import { PrivacyModule } from '../privacy/privacy.module';
import { RuntimeBridgeModule } from '../runtime-bridge/runtime-bridge.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { RetentionService } from './retention.service';
import { SystemController } from './system.controller';
import { SystemQueue } from './system.queue';

@Module({
  imports: [AccessModule, PrivacyModule, AgentsModule, PackagesModule, RuntimeBridgeModule, WebhooksModule],
  controllers: [SystemController],
  providers: [SystemQueue, RetentionService],
  exports: [SystemQueue, RetentionService],
})
export class SystemModule {}
