import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OperatorGuard } from '../../common/auth/operator.guard';
import { RejectDto, SuspendDto } from './dto/package.dto';
import { VersionLifecycle } from './version-lifecycle.service';
import { PackageDto, ReviewQueueDto, VersionDto } from './dto/package-responses.dto';
import { PlatformProblems } from '../../common/openapi/error-responses';

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller('v1/operator')
export class OperatorPackagesController {
  constructor(private readonly lifecycle: VersionLifecycle) {}

  @Get('reviews')
  @ApiOperation({ summary: 'Versions waiting for manual review, oldest first' })
  @ApiOkResponse({ type: ReviewQueueDto })
  reviews() {
    return this.lifecycle.reviewQueue();
  }

  @Post('packages/:package_id/versions/:version_id/approve')
  @HttpCode(200)
  @ApiOkResponse({ type: VersionDto })
  @ApiOperation({ summary: 'Approve a version in review; the developer can then publish it' })
  @PlatformProblems(409)
  approve(@Param('package_id') packageId: string, @Param('version_id') versionId: string) {
    return this.lifecycle.approve(packageId, versionId);
  }

  @Post('packages/:package_id/versions/:version_id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject: the version returns to draft with the reason visible to the provider' })
  @ApiOkResponse({ type: VersionDto })
  @PlatformProblems(409)
  reject(@Param('package_id') packageId: string, @Param('version_id') versionId: string, @Body() body: RejectDto) {
    return this.lifecycle.reject(packageId, versionId, body.reason);
  }

  @Post('packages/:package_id/suspend')
  @HttpCode(200)
  @ApiOkResponse({ type: PackageDto })
  @ApiOperation({ summary: 'Suspend a package: it leaves the catalog and its capabilities stop executing' })
  @PlatformProblems(409)
  suspend(@Param('package_id') packageId: string, @Body() body: SuspendDto) {
    return this.lifecycle.suspend(packageId, body);
  }

  @Post('packages/:package_id/reinstate')
  @HttpCode(200)
  @ApiOkResponse({ type: PackageDto })
  @ApiOperation({ summary: 'Lift a suspension' })
  @PlatformProblems(409)
  reinstate(@Param('package_id') packageId: string) {
    return this.lifecycle.reinstate(packageId);
  }
}
