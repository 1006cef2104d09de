import { Body, Controller, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { AppsService, MAX_SECRET_GRACE_SECONDS } from './apps.service';
import { PlatformRoute } from './auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from './auth/platform-principal';
import { AppDto, CreateAppDto, RuntimeAppDto, UpdateAppDto } from './dto/app.dto';
import { AppListDto } from './dto/provider-responses.dto';

class RotateSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_SECRET_GRACE_SECONDS,
    description: 'How long the old secret keeps working; 0 (the default) ends it now',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_SECRET_GRACE_SECONDS)
  grace_period_seconds?: number;
}

@ApiTags('provider apps')
@Controller('v1/providers')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Post('apps')
  @PlatformRoute({ principals: ['developer'] })
  @ApiOperation({ summary: 'Step 3: register an app; the client secret is shown once' })
  @ApiCreatedResponse({ type: AppDto })
  create(@Principal() principal: PlatformPrincipal, @Body() body: CreateAppDto): Promise<AppDto> {
    return this.apps.create(principal.developerId, body);
  }

  @Get('apps')
  @PlatformRoute({ scope: 'apps:read' })
  @ApiOperation({ summary: "The developer's apps (an app token sees its own app)" })
  @ApiOkResponse({ type: AppListDto })
  list(@Principal() principal: PlatformPrincipal): Promise<{ apps: AppDto[] }> {
    return this.apps.list(principal);
  }

  @Get('apps/:app_id')
  @PlatformRoute({ scope: 'apps:read' })
  @ApiOkResponse({ type: AppDto })
  @ApiOperation({ summary: "One of the caller's apps" })
  get(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string): Promise<AppDto> {
    return this.apps.get(principal, appId);
  }

  @Patch('apps/:app_id')
  @PlatformRoute({ scope: 'apps:write' })
  @ApiOkResponse({ type: AppDto })
  @ApiOperation({ summary: 'Update name, description, redirect URIs, webhook URL or scopes' })
  update(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: UpdateAppDto): Promise<AppDto> {
    return this.apps.update(principal, appId, body);
  }

  @Post('apps/:app_id/secret')
  @HttpCode(200)
  @PlatformRoute({ principals: ['developer'] })
  @ApiOperation({ summary: 'Rotate the client secret (shown once); the old one ends now or after grace_period_seconds (max 86400)' })
  @ApiOkResponse({ type: AppDto })
  rotate(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: RotateSecretDto): Promise<AppDto> {
    return this.apps.rotateSecret(principal, appId, body?.grace_period_seconds ?? 0);
  }

  @Patch('runtime/apps/:app_id')
  @PlatformRoute({ scope: 'apps:write' })
  @ApiOperation({ summary: "Set the app's webhook endpoint (HTTPS)" })
  @ApiOkResponse({ type: AppDto })
  runtime(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: RuntimeAppDto): Promise<AppDto> {
    return this.apps.update(principal, appId, { webhook_url: body.webhook_url });
  }
}
