import { Injectable } from '@nestjs/common';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import { decodeKeyset, keysetPage } from '../../common/pagination/keyset-cursor';
import { DEFAULT_PAGE_LIMIT } from '../../common/pagination/page-query';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { visibleAppIds } from '../providers/visible-apps';
import { AppEventRow, AppEventsRepository } from './app-events.repository';
import { AppEventDto, AppEventListQuery, AppEventPageDto } from './dto/app-events.dto';

/** How long the events API keeps an app's events (Stripe keeps 30 days of `/v1/events`). */
export const APP_EVENT_RETENTION_DAYS = 30;

/**
 * The events API: an app's webhook-able events for reconciliation, each as
 * the envelope its endpoint receives, so a provider matches them by event id
 * against what it processed and fetches what it missed.
 */
@Injectable()
export class AppEvents {
  constructor(
    private readonly events: AppEventsRepository,
    private readonly apps: AppsService,
  ) {}

  async list(principal: PlatformPrincipal, query: AppEventListQuery): Promise<AppEventPageDto> {
    const appIds = await visibleAppIds(this.apps, principal, query.app_id);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.events.page(
      appIds,
      {
        types: query.type ?? null,
        since: query.since ?? null,
        until: query.until ?? null,
        after: query.cursor ? decodeKeyset(query.cursor) : null,
      },
      limit + 1,
    );
    const { page, nextCursor } = keysetPage(rows, limit);
    return { events: page.map(toDto), next_cursor: nextCursor };
  }

  /** One event of the principal's apps; another developer's event answers 404 like an unknown one. */
  async get(principal: PlatformPrincipal, eventId: string): Promise<AppEventDto> {
    const row = isId(eventId, 'evt') ? await this.events.findForApps(eventId, await visibleAppIds(this.apps, principal)) : null;
    if (!row) throw new ProblemError('not_found', `No event ${eventId}`);
    return toDto(row);
  }

  /** Drops events past `APP_EVENT_RETENTION_DAYS` (the hourly retention job). */
  purgeOld(): Promise<number> {
    return this.events.purgeOlderThan(APP_EVENT_RETENTION_DAYS);
  }
}

function toDto(row: AppEventRow): AppEventDto {
  return JSON.parse(row.body) as AppEventDto;
}
