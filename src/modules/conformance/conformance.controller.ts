import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { ConformanceRunsQueryDto } from './conformance-runs.dto';
import { ConformanceRuns, toRunDto } from './conformance-runs.service';
import { ConformanceRunDto, ConformanceRunListDto } from './conformance-run-responses.dto';

@ApiTags('provider packages')
@Controller('v1/providers/conformance')
export class ConformanceController {
  constructor(private readonly runs: ConformanceRuns) {}

  @Get()
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({ summary: "Conformance runs of one of the caller's versions, newest first (the console shows the latest report)" })
  @ApiOkResponse({ type: ConformanceRunListDto })
  async list(@Principal() principal: PlatformPrincipal, @Query() query: ConformanceRunsQueryDto) {
    const rows = await this.runs.listForVersion(principal, query.version_id, query.limit ?? 10);
    return { data: rows.map(toRunDto) };
  }

  @Get(':conf_id')
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({ summary: 'Status and report of a conformance run' })
  @ApiOkResponse({ type: ConformanceRunDto })
  async get(@Principal() principal: PlatformPrincipal, @Param('conf_id') id: string) {
    return toRunDto(await this.runs.get(principal, id));
  }
}
