import { Body, Controller, Get, Headers, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Inject } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { DeliveryListQuery, PutWebhookProfileDto, WebhookProfileDto, WebhookRecoverDto, WebhookTestDto } from './dto/webhook.dto';
import { InboundAck, InboundWebhooks } from './inbound-webhooks.service';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { WebhookProfiles } from './webhook-profiles.service';

@ApiTags('provider webhooks')
@Controller('v1/providers')
export class WebhooksController {
  constructor(
    private readonly profiles: WebhookProfiles,
    private readonly deliveries: WebhookDeliveries,
    private readonly inbound: InboundWebhooks,
  ) {}

  @Get('apps/:app_id/webhook')
  @PlatformRoute({ scope: 'webhooks:read' })
  get(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string): Promise<WebhookProfileDto> {
    return this.profiles.get(principal, appId);
  }

  @Put('apps/:app_id/webhook')
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Create or update the webhook profile; the signing secret is shown on creation only' })
  async put(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Body() body: PutWebhookProfileDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookProfileDto> {
    const { created, profile } = await this.profiles.put(principal, appId, body);
    void reply.status(created ? 201 : 200);
    return profile;
  }

  @Post('apps/:app_id/webhook/secret')
  @HttpCode(200)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Rotate the signing secret (shown once); the previous one also signs for the grace period' })
  rotate(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string): Promise<WebhookProfileDto> {
    return this.profiles.rotate(principal, appId);
  }

  @Post('apps/:app_id/webhook/test')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Send a signed test event of a chosen type with sample data' })
  test(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: WebhookTestDto) {
    return this.deliveries.sendTest(principal, appId, body.type);
  }

  @Post('apps/:app_id/webhook/recover')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Re-send every failed delivery since a given instant, as a background job' })
  recover(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: WebhookRecoverDto) {
    return this.deliveries.requestRecover(principal, appId, body.since);
  }

  @Get('apps/:app_id/webhook/deliveries')
  @PlatformRoute({ scope: 'webhooks:read' })
  list(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Query() query: DeliveryListQuery) {
    return this.deliveries.list(principal, appId, query);
  }

  @Get('apps/:app_id/webhook/deliveries/:delivery_id')
  @PlatformRoute({ scope: 'webhooks:read' })
  delivery(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('delivery_id') deliveryId: string) {
    return this.deliveries.get(principal, appId, deliveryId);
  }

  @Post('apps/:app_id/webhook/deliveries/:delivery_id/replay')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Re-send a delivered or failed delivery: same event id and idempotency key, new attempt chain' })
  replay(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('delivery_id') deliveryId: string) {
    return this.deliveries.replay(principal, appId, deliveryId);
  }

  @Post('runtime/webhook')
  @HttpCode(202)
  @PlatformRoute({ scope: 'events:write', principals: ['app'] })
  @ApiOperation({ summary: 'Inbound provider event, signed with X-Signature-256 over the raw body' })
  receive(
    @Principal() principal: PlatformPrincipal,
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Headers('x-signature-256') signature: string | undefined,
  ): Promise<InboundAck> {
    return this.inbound.receive((principal as { appId: string }).appId, request.rawBody, signature);
  }
}

@ApiTags('provider webhooks')
@Controller('.well-known')
export class WebhookIpsController {
  private readonly updatedAt = new Date().toISOString();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('webhook-ips')
  @ApiOperation({ summary: 'Address ranges webhook deliveries come from (WEBHOOK_DELIVERY_IPS)' })
  ips(): { ipv4: string[]; ipv6: string[]; updated_at: string } {
    return { ...this.config.webhookDeliveryIps, updated_at: this.updatedAt };
  }
}
