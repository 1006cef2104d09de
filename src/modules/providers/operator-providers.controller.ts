import { Body, Controller, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OperatorGuard } from '../../common/auth/operator.guard';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { AppsService } from './apps.service';
import { DeveloperSuspensions } from './developer-suspensions.service';
import { AppDto, SetAppTierDto } from './dto/app.dto';
import { OperatorDeveloperDto, SuspendDeveloperDto } from './dto/operator.dto';

/** Operator API over provider accounts and apps: suspension (as for packages) and tiers (as for users). */
@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller('v1/operator')
export class OperatorProvidersController {
  constructor(
    private readonly suspensions: DeveloperSuspensions,
    private readonly apps: AppsService,
  ) {}

  @Post('developers/:developer_id/suspend')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Suspend a developer account: its console and app tokens, logins and token grants answer 403 account_suspended',
  })
  @ApiOkResponse({ type: OperatorDeveloperDto })
  @PlatformProblems(400, 404, 409)
  suspend(@Param('developer_id') developerId: string, @Body() body: SuspendDeveloperDto): Promise<OperatorDeveloperDto> {
    return this.suspensions.suspend(developerId, body.reason);
  }

  @Post('developers/:developer_id/reinstate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Lift the suspension of a developer account' })
  @ApiOkResponse({ type: OperatorDeveloperDto })
  @PlatformProblems(404, 409)
  reinstate(@Param('developer_id') developerId: string): Promise<OperatorDeveloperDto> {
    return this.suspensions.reinstate(developerId);
  }

  @Patch('apps/:app_id')
  @ApiOperation({ summary: "Change an app's provider tier (Free, Pro, Enterprise): its limits, runtime timeout and response size" })
  @ApiOkResponse({ type: AppDto })
  @PlatformProblems(400, 404)
  setTier(@Param('app_id') appId: string, @Body() body: SetAppTierDto): Promise<AppDto> {
    return this.apps.setTier(appId, body.tier);
  }
}
