import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { AppEvents } from './app-events.service';
import { AppEventDto, AppEventListQuery, AppEventPageDto } from './dto/app-events.dto';

/**
 * The events API (as Stripe's `/v1/events`): what an app's webhook endpoints
 * would receive, kept 30 days whether or not the app subscribes, for
 * reconciliation without the delivery log.
 */
@ApiTags('provider webhooks')
@Controller('v1/providers/events')
export class AppEventsController {
  constructor(private readonly events: AppEvents) {}

  @Get()
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({
    summary:
      "The app's events (a console token: its developer's apps), newest first, filtered by type and time; keyset cursor; kept 30 days",
  })
  @ApiOkResponse({ type: AppEventPageDto })
  @PlatformProblems(404)
  list(@Principal() principal: PlatformPrincipal, @Query() query: AppEventListQuery): Promise<AppEventPageDto> {
    return this.events.list(principal, query);
  }

  @Get(':event_id')
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({ summary: 'One event, exactly the envelope its webhook deliveries carry' })
  @ApiOkResponse({ type: AppEventDto })
  get(@Principal() principal: PlatformPrincipal, @Param('event_id') eventId: string): Promise<AppEventDto> {
    return this.events.get(principal, eventId);
  }
}
