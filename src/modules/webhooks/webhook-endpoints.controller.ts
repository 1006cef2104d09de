import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import {
  CreateWebhookEndpointDto,
  UpdateWebhookEndpointDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
} from './dto/webhook-endpoints.dto';
import { DeliveryDetailDto, DeliveryPageDto, DeliverySummaryDto, RecoverRequestedDto } from './dto/webhook-responses.dto';
import { DeliveryListQuery, WebhookRecoverDto, WebhookTestDto } from './dto/webhook.dto';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { WebhookEndpoints } from './webhook-endpoints.service';

/**
 * Several webhook endpoints per app (docs/webhooks.md, "Several endpoints"):
 * the same token kinds and scopes as the profile routes, RFC 9457 problems.
 * The primary endpoint is the spec's profile, reachable here by its id too.
 */
@ApiTags('provider webhooks')
@Controller('v1/providers/apps/:app_id/webhook/endpoints')
export class WebhookEndpointsController {
  constructor(
    private readonly endpoints: WebhookEndpoints,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  @Get()
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({ summary: "The app's webhook endpoints (at most 16, the primary one first); secrets are never shown here" })
  @ApiOkResponse({ type: WebhookEndpointListDto })
  list(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string) {
    return this.endpoints.list(principal, appId);
  }

  @Post()
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({
    summary:
      'Add an endpoint: its signing secret is shown in this answer only, and a signed ping checks it at once (last_ping); 409 past 16 endpoints',
  })
  @ApiCreatedResponse({ type: WebhookEndpointDto })
  @PlatformProblems(409)
  create(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Body() body: CreateWebhookEndpointDto) {
    return this.endpoints.create(principal, appId, body);
  }

  @Get(':endpoint_id')
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({ summary: 'One endpoint with its latest check (last_ping)' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  get(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('endpoint_id') endpointId: string) {
    return this.endpoints.get(principal, appId, endpointId);
  }

  @Patch(':endpoint_id')
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Change the URL, description, event types, timeout or enabled state; a new URL is checked with a signed ping' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  update(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Param('endpoint_id') endpointId: string,
    @Body() body: UpdateWebhookEndpointDto,
  ) {
    return this.endpoints.update(principal, appId, endpointId, body);
  }

  @Delete(':endpoint_id')
  @HttpCode(204)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Delete an endpoint and its delivery log; the primary endpoint (the webhook profile) cannot be deleted (409)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @PlatformProblems(409)
  async remove(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('endpoint_id') endpointId: string) {
    await this.endpoints.remove(principal, appId, endpointId);
  }

  @Post(':endpoint_id/secret')
  @HttpCode(200)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: "Rotate the endpoint's signing secret (shown once); the previous one also signs for the grace period" })
  @ApiOkResponse({ type: WebhookEndpointDto })
  rotate(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('endpoint_id') endpointId: string) {
    return this.endpoints.rotate(principal, appId, endpointId);
  }

  @Post(':endpoint_id/ping')
  @HttpCode(200)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Check the endpoint again with a signed ping; the answer carries the result (last_ping)' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  ping(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Param('endpoint_id') endpointId: string) {
    return this.endpoints.ping(principal, appId, endpointId);
  }

  @Post(':endpoint_id/test')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: 'Send a signed test event of a chosen type with sample data to this endpoint' })
  @ApiAcceptedResponse({ type: DeliverySummaryDto })
  test(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Param('endpoint_id') endpointId: string,
    @Body() body: WebhookTestDto,
  ) {
    return this.deliveries.sendTest(principal, appId, endpointId, body.type);
  }

  @Post(':endpoint_id/recover')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({ summary: "Re-send the endpoint's failed deliveries since a given instant, as a background job" })
  @ApiAcceptedResponse({ type: RecoverRequestedDto })
  recover(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Param('endpoint_id') endpointId: string,
    @Body() body: WebhookRecoverDto,
  ) {
    return this.deliveries.requestRecover(principal, appId, endpointId, body.since);
  }

  @Get(':endpoint_id/deliveries')
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({ summary: "The endpoint's delivery log, newest first, filtered by status, event type, package and time; keyset cursor" })
  @ApiOkResponse({ type: DeliveryPageDto })
  deliveryLog(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Param('endpoint_id') endpointId: string,
    @Query() query: DeliveryListQuery,
  ) {
    return this.deliveries.list(principal, appId, endpointId, query);
  }

  @Get(':endpoint_id/deliveries/:delivery_id')
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({ summary: 'One delivery of the endpoint with its payload and every attempt' })
  @ApiOkResponse({ type: DeliveryDetailDto })
  delivery(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Param('endpoint_id') endpointId: string,
    @Param('delivery_id') deliveryId: string,
  ) {
    return this.deliveries.get(principal, appId, endpointId, deliveryId);
  }

  @Post(':endpoint_id/deliveries/:delivery_id/replay')
  @HttpCode(202)
  @PlatformRoute({ scope: 'webhooks:write' })
  @ApiOperation({
    summary: 'Re-send a delivered or failed delivery to this endpoint: same event id and idempotency key, new attempt chain',
  })
  @ApiAcceptedResponse({ type: DeliverySummaryDto })
  @PlatformProblems(409)
  replay(
    @Principal() principal: PlatformPrincipal,
    @Param('app_id') appId: string,
    @Param('endpoint_id') endpointId: string,
    @Param('delivery_id') deliveryId: string,
  ) {
    return this.deliveries.replay(principal, appId, endpointId, deliveryId);
  }
}
