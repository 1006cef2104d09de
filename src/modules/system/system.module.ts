import { Module } from '@nestjs/common';
import { RetentionService } from './retention.service';
import { SystemController } from './system.controller';
import { SystemQueue } from './system.queue';

@Module({
  controllers: [SystemController],
  providers: [SystemQueue, RetentionService],
  exports: [SystemQueue, RetentionService],
})
export class SystemModule {}
