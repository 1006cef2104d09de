import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { ProvidersModule } from '../providers/providers.module';
import { ConformanceRunner } from './conformance-runner';
import { ConformanceRunsRepository } from './conformance-runs.repository';
import { ConformanceRuns } from './conformance-runs.service';
import { ConformanceController } from './conformance.controller';
import { WebhookReceivers } from './webhook-receivers';

/** The six-dimension conformance suite (docs/conformance.md), its run records and the queue for full runs. */
@Module({
  imports: [AccessModule, ProvidersModule],
  controllers: [ConformanceController],
  providers: [ConformanceRunner, ConformanceRuns, ConformanceRunsRepository, WebhookReceivers],
  exports: [ConformanceRunner, ConformanceRuns, WebhookReceivers],
})
export class ConformanceModule {}
