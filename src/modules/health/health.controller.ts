import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { HealthService, Readiness } from './health.service';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process is up' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: PostgreSQL and Redis answer; 503 otherwise' })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<Readiness> {
    const readiness = await this.health.readiness();
    if (readiness.status !== 'ok') void reply.status(503);
    return readiness;
  }
}
