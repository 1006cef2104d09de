import { Body, Controller, Get, Headers, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import {
  DeliveryDetailDto,
  DeliveryPageDto,
  DeliverySummaryDto,
  InboundAckDto,
  RecoverRequestedDto,
  WebhookIpsDto,
  WebhookProfileResponseDto,
} from './dto/webhook-responses.dto';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { applyTighterRateHeaders } from '../../common/rate-limit/user-rate-limit.guard';

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
  @ApiOkResponse({ type: WebhookProfileResponseDto })
  @ApiOperation({ summary: "The app's webhook profile (the secret is never shown here)" })
  get(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string): Promise<WebhookProfileDto> {
    return this.profiles.get(principal, appId);
  }

  @Put('apps/:app_id/webhook')
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Create or update the webhook profile; the signing secret is shown on creation only' })
  @ApiOkResponse({ type: WebhookProfileResponseDto, description: 'Updated' })
  @ApiCreatedResponse({ type: WebhookProfileResponseDto, description: 'Created; carries the signing secret' })
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
  @ApiOkResponse({ type: WebhookProfileResponseDto })
  rotate(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string): Promise<WebhookProfileDto> {
    return this.profiles.rotate(principal, appId);
  }

  @Post('apps/:app_id/webhook/test')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Send a signed test event of a chosen type with sample data' })
  @ApiAcceptedResponse({ type: DeliverySummaryDto })
  test(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: WebhookTestDto) {
    return this.deliveries.sendTest(principal, appId, null, body.type);
  }

  @Post('apps/:app_id/webhook/recover')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({
    summary: "Re-send the webhook profile's (primary endpoint's) failed deliveries since a given instant, as a background job",
  })
  @ApiAcceptedResponse({ type: RecoverRequestedDto })
  recover(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: WebhookRecoverDto) {
    return this.deliveries.requestRecover(principal, appId, null, body.since);
  }

  @Get('apps/:app_id/webhook/deliveries')
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOkResponse({ type: DeliveryPageDto })
  @ApiOperation({
    summary:
      "The webhook profile's (primary endpoint's) delivery log, newest first, filtered by status, event type and time; keyset cursor",
  })
  list(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Query() query: DeliveryListQuery) {
    return this.deliveries.list(principal, appId, null, query);
  }

  @Get('apps/:app_id/webhook/deliveries/:delivery_id')
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOkResponse({ type: DeliveryDetailDto })
  @ApiOperation({ summary: 'One delivery of the app (to any of its endpoints) with its payload and every attempt' })
  delivery(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('delivery_id') deliveryId: string) {
    return this.deliveries.get(principal, appId, null, deliveryId);
  }

  @Post('apps/:app_id/webhook/deliveries/:delivery_id/replay')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Re-send a delivered or failed delivery: same event id and idempotency key, new attempt chain' })
  @ApiAcceptedResponse({ type: DeliverySummaryDto })
  @PlatformProblems(409)
  replay(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('delivery_id') deliveryId: string) {
    return this.deliveries.replay(principal, appId, null, deliveryId);
  }

  @Post('runtime/webhook')
  @HttpCode(202)
  @PlatformRoute({ scope: 'events:write', principals: ['app'] })
  @ApiOperation({
    summary:
      "Inbound provider event, signed with X-Signature-256 over the raw body; at most 200 / 2,000 / 20,000 events a minute per app by the app's tier (429 rate_limit_exceeded with Retry-After)",
  })
  @ApiAcceptedResponse({ type: InboundAckDto })
  @PlatformProblems(400, 401, 429)
  @ApiBody({
    description: 'The provider event (JSON), signed with X-Signature-256 over these exact bytes',
    schema: { type: 'object', additionalProperties: true },
  })
  receive(
    @Principal() principal: PlatformPrincipal,
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Headers('x-signature-256') signature: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<InboundAck> {
    return this.inbound.receive((principal as { appId: string }).appId, request.rawBody, signature, (decision) =>
      applyTighterRateHeaders(reply, decision),
    );
  }
}

@ApiTags('provider webhooks')
@Controller('.well-known')
export class WebhookIpsController {
  private readonly updatedAt = new Date().toISOString();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('webhook-ips')
  @ApiOperation({ summary: 'Address ranges webhook deliveries come from (WEBHOOK_DELIVERY_IPS)' })
  @ApiOkResponse({ type: WebhookIpsDto })
  ips(): { ipv4: string[]; ipv6: string[]; updated_at: string } {
    return { ...this.config.webhookDeliveryIps, updated_at: this.updatedAt };
  }
}
