import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { CreatePackageDto, CreateVersionDto, ValidateDraftDto } from './dto/package.dto';
import { PackagesService } from './packages.service';
import { VersionLifecycle } from './version-lifecycle.service';
import {
  LocalValidationResultDto,
  PackageDto,
  PackageListDto,
  PublishedPackageDto,
  SubmissionDto,
  VersionDto,
} from './dto/package-responses.dto';
import { ConformanceRunDto } from '../conformance/conformance-run-responses.dto';
import { PlatformProblems } from '../../common/openapi/error-responses';

@ApiTags('provider packages')
@Controller('v1/providers/packages')
export class PackagesController {
  constructor(
    private readonly packages: PackagesService,
    private readonly lifecycle: VersionLifecycle,
  ) {}

  @Post()
  @PlatformRoute({ scope: 'packages:write' })
  @ApiOperation({
    summary: 'Step 4: create a package and its first version',
    description:
      'Each capability descriptor needs only `type` and `schema` (full or short form); every other field has a documented default, and the stored form answered shows them. The runtime URL goes on the capabilities (`runtimeUrl`), or once on the package as their default; all capabilities of a version share one runtime. The body is checked against the published descriptor schema (`GET /v1/providers/descriptor.schema.json`): unknown fields are refused with the nearest known name, and a 400 lists every error at once in `errors`. docs/descriptor.md has every field and a complete package per mode.',
  })
  @ApiBody({ type: CreatePackageDto })
  @ApiCreatedResponse({ type: PackageDto })
  @PlatformProblems(400, 409)
  // The body is read as given: the descriptor contract checks it (every error at once), not class-validator.
  create(@Principal() principal: PlatformPrincipal, @Body() body: unknown) {
    return this.packages.create(principal, body);
  }

  @Get()
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOkResponse({ type: PackageListDto })
  @ApiOperation({ summary: "The caller's packages" })
  list(@Principal() principal: PlatformPrincipal) {
    return this.packages.list(principal);
  }

  @Get(':package_id')
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({
    summary: 'Read a package and its versions',
    description:
      'The package’s `runtimeUrl` is the one live traffic calls: the published version’s, or the newest version’s before anything is published. Each version shows its own `runtimeUrl`, the one it is validated and reviewed against.',
  })
  @ApiOkResponse({ type: PackageDto })
  get(@Principal() principal: PlatformPrincipal, @Param('package_id') packageId: string) {
    return this.packages.get(principal, packageId);
  }

  @Post(':package_id/versions')
  @PlatformRoute({ scope: 'packages:write' })
  @ApiOperation({
    summary: 'Add a version; its number must be greater than the last',
    description:
      'The version keeps its own `runtimeUrl` (given, or the newest version’s). The published version keeps calling its reviewed runtime until this version is published. The body is checked against `#/$defs/version` of the descriptor schema; a 400 lists every error at once in `errors`.',
  })
  @ApiBody({ type: CreateVersionDto })
  @ApiCreatedResponse({ type: VersionDto })
  @PlatformProblems(400)
  addVersion(@Principal() principal: PlatformPrincipal, @Param('package_id') packageId: string, @Body() body: unknown) {
    return this.packages.addVersion(principal, packageId, body);
  }

  @Post(':package_id/versions/:version_id/validate')
  @HttpCode(200)
  @PlatformRoute({ scope: 'packages:write' })
  @ApiQuery({ name: 'full', required: false, description: 'true: all six dimensions against the runtime, as a queued run (202)' })
  @ApiOperation({
    summary: 'Step 5: conformance. Local (schema, contracts, documentation) answers the result; ?full=true queues a full run',
    description:
      'Without a body, the stored version is validated. With a body `{ capabilities }` (`#/$defs/draft` of the descriptor schema), those descriptors are checked against the descriptor schema (a 400 lists every error at once in `errors`) and validated locally in place of the stored ones, against the version’s runtime, without being stored; a full run (`?full=true`) always validates the stored version, so it takes no body.',
  })
  @ApiBody({ type: ValidateDraftDto, required: false })
  @PlatformProblems(400)
  @ApiOkResponse({ type: LocalValidationResultDto, description: 'Local validation result' })
  @ApiAcceptedResponse({
    type: ConformanceRunDto,
    description: 'Full run queued; Location names the run',
    headers: { Location: { description: 'The run: /v1/providers/conformance/{conf_id}', schema: { type: 'string' } } },
  })
  async validate(
    @Principal() principal: PlatformPrincipal,
    @Param('package_id') packageId: string,
    @Param('version_id') versionId: string,
    @Query('full') full: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const fullRun = full === 'true' || full === '1';
    const draft = this.packages.draftCapabilities(body, fullRun);
    const outcome = await this.lifecycle.validate(principal, packageId, versionId, fullRun, draft);
    if (!outcome.accepted) return outcome.result;
    void reply.status(202).header('Location', `/v1/providers/conformance/${outcome.run.id}`);
    return outcome.run;
  }

  @Post('manage/:package_id/versions/:version_id/submit')
  @HttpCode(200)
  @PlatformRoute({ scope: 'packages:write' })
  @ApiOperation({ summary: 'Step 6: submit; runs all six dimensions (reusing a fresh full run) and enforces the gate' })
  @ApiOkResponse({ type: SubmissionDto })
  @PlatformProblems(409)
  submit(@Principal() principal: PlatformPrincipal, @Param('package_id') packageId: string, @Param('version_id') versionId: string) {
    return this.lifecycle.submit(principal, packageId, versionId);
  }

  @Post('manage/:package_id/versions/:version_id/publish')
  @HttpCode(200)
  @PlatformRoute({ scope: 'packages:write' })
  @ApiOperation({ summary: 'Step 7: publish an approved or automatically listed version to the catalog' })
  @ApiOkResponse({ type: PublishedPackageDto })
  @PlatformProblems(409)
  publish(@Principal() principal: PlatformPrincipal, @Param('package_id') packageId: string, @Param('version_id') versionId: string) {
    return this.lifecycle.publish(principal, packageId, versionId);
  }
}
