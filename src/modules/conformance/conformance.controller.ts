import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { ConformanceRuns, toRunDto } from './conformance-runs.service';

@ApiTags('provider packages')
@Controller('v1/providers/conformance')
export class ConformanceController {
  constructor(private readonly runs: ConformanceRuns) {}

  @Get(':conf_id')
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({ summary: 'Status and report of a conformance run' })
  async get(@Principal() principal: PlatformPrincipal, @Param('conf_id') id: string) {
    return toRunDto(await this.runs.get(principal, id));
  }
}
