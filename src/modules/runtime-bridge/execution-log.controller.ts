import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { ExecutionDetailDto, ExecutionLogQuery, ExecutionPageDto } from './dto/execution-log.dto';
import { ExecutionLog } from './execution-log.service';

/** The execution log: the traces of the caller's capability calls (kept 30 days), by request id or filtered. */
@ApiTags('runtime bridge')
@Controller('v1/providers/executions')
export class ExecutionLogController {
  constructor(private readonly log: ExecutionLog) {}

  @Get()
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({
    summary:
      "Executions of the app's capabilities (a console token: its developer's apps), newest first, filtered by package, capability, install, outcome, error code and time; keyset cursor",
  })
  @ApiOkResponse({ type: ExecutionPageDto })
  @PlatformProblems(404)
  list(@Principal() principal: PlatformPrincipal, @Query() query: ExecutionLogQuery): Promise<ExecutionPageDto> {
    return this.log.list(principal, query);
  }

  @Get(':request_id')
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({ summary: 'One execution by its request id: the phases with their timings, attempts and the error' })
  @ApiOkResponse({ type: ExecutionDetailDto })
  get(@Principal() principal: PlatformPrincipal, @Param('request_id') requestId: string): Promise<ExecutionDetailDto> {
    return this.log.get(principal, requestId);
  }
}
