import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { AccessModule } from '../access/access.module';
import { PackagesModule } from '../packages/packages.module';
import { PrivacyModule } from '../privacy/privacy.module';
import { RuntimeBridgeModule } from '../runtime-bridge/runtime-bridge.module';
import { RetentionService } from './retention.service';
import { SystemController } from './system.controller';
import { SystemQueue } from './system.queue';

@Module({
  imports: [AccessModule, PrivacyModule, AgentsModule, PackagesModule, RuntimeBridgeModule],
  controllers: [SystemController],
  providers: [SystemQueue, RetentionService],
  exports: [SystemQueue, RetentionService],
})
export class SystemModule {}
