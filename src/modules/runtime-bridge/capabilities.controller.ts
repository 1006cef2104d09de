import { Body, Controller, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { platformRouteOptions } from '../providers/auth/platform-principal';
import { Caller, CapabilityCallerGuard } from './capability-caller.guard';
import { CapabilityCaller, CapabilityExecutor } from './capability-executor.service';
import { ExecuteCapabilityDto } from './dto/execute.dto';
import { ExecutionResultDto } from './dto/bridge-responses.dto';
import { PlatformProblems } from '../../common/openapi/error-responses';

@ApiTags('runtime bridge')
@Controller('v1/providers/packages/:package_id/capabilities')
export class CapabilitiesController {
  constructor(private readonly executor: CapabilityExecutor) {}

  @Post(':capability_name/execute')
  @HttpCode(200)
  @platformRouteOptions({ scope: 'capabilities:execute', principals: ['app'], delegated: true })
  @UseGuards(CapabilityCallerGuard)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Execute a capability on the provider runtime',
    description:
      'state: cached for ttl; history: cursor passed through; action: answers 202 with a pending confirmation the user confirms at /v1/actions/:id/confirm; realtime: subscribes (202) and relays events on Redis. ' +
      '`params`/`input` are checked against the capability schema before any runtime call (400 `missing_field` / `invalid_format` with `field` and `schema_path`); ' +
      'the runtime answer is checked too (500 `execution_failed`). A retryable runtime error whose wait does not fit in the request budget answers at once with `Retry-After` ' +
      '(429 `rate_limit_exceeded` for the runtime rate limit, else 503 `service_unavailable`, with `retryable: true` and `retry_after`).',
  })
  @ApiOkResponse({ type: ExecutionResultDto, description: 'state and history capabilities' })
  @ApiAcceptedResponse({ type: ExecutionResultDto, description: 'action (pending confirmation) and realtime (subscribed) capabilities' })
  @PlatformProblems(409, 502, 504)
  async execute(
    @Caller() caller: CapabilityCaller,
    @Param('package_id') packageId: string,
    @Param('capability_name') capabilityName: string,
    @Body() body: ExecuteCapabilityDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const outcome = await this.executor.execute(caller, packageId, capabilityName, body);
    // An action waits for its user's confirmation and a subscription for its events: accepted, not answered yet.
    void reply.status(outcome.kind === 'accepted' ? 202 : 200);
    return outcome.body;
  }
}
