import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OperatorGuard } from '../../common/auth/operator.guard';
import { SystemQueue } from './system.queue';
import { PurgeQueuedDto } from './system.dto';

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller('v1/operator/system')
export class SystemController {
  constructor(private readonly systemQueue: SystemQueue) {}

  @Post('purge')
  @HttpCode(202)
  @ApiOperation({ summary: 'Enqueue a purge of expired rows (runs on the worker role)' })
  @ApiAcceptedResponse({ type: PurgeQueuedDto })
  async purge(): Promise<{ job_id: string; status: 'queued' }> {
    const { jobId } = await this.systemQueue.requestPurge('operator');
    return { job_id: jobId, status: 'queued' };
  }
}
