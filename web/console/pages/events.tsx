import { useState } from 'preact/hooks';
import { ok, type Schemas } from '../../shared/api';
import { Button, EmptyState, formatDate, Loaded, PageTitle } from '../../shared/ui';
import { Section } from '../components';
import { KeysetPage, LoadOlder, useKeysetPages } from '../keyset-pages';
import { PRODUCT } from '../product';
import { api } from '../session';
import './executions.css';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../types';

type AppEvent = Schemas['AppEventDto'];

/**
 * The events API in the console: the developer's events of the last 30 days,
 * newest first, each opening to the envelope its webhook deliveries carry, so
 * an event id from a receiver's logs can be checked here.
 */
export function EventsPage() {
  const [type, setType] = useState<WebhookEventType | ''>('');
  const pages = useKeysetPages(
    async (next): Promise<KeysetPage<AppEvent>> => {
      const query = { ...(type ? { type: [type] } : {}), ...(next ? { cursor: next } : {}) };
      const page = await ok(api.GET('/v1/providers/events', { params: { query } }));
      return { items: page.events, next: page.next_cursor };
    },
    [type],
  );
  const { first: list, more } = pages;
  return (
    <>
      <PageTitle product={PRODUCT}>Events</PageTitle>
      <p>
        Every event of your apps for 30 days, exactly as your webhook endpoint receives it, whether or not it subscribes. Match them by
        event id to catch up on missed deliveries.
      </p>
      <Section
        title="Events"
        actions={
          <Button onClick={list.reload} busy={list.loading}>
            Refresh
          </Button>
        }
      >
        <div class="field inline-field">
          <label for="event-type">Type</label>
          <select id="event-type" value={type} onChange={(event) => setType(event.currentTarget.value as WebhookEventType | '')}>
            <option value="">All types</option>
            {WEBHOOK_EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <Loaded resource={list}>
          {(first) => {
            const rows = [...first, ...more];
            if (rows.length === 0) return <EmptyState>No events yet. They appear as packages, installs and calls happen.</EmptyState>;
            return (
              <>
                <ul class="plain event-list" aria-label="Events, newest first">
                  {rows.map((e) => (
                    <li key={e.id}>
                      <details>
                        <summary>
                          <code>{e.type}</code> · {formatDate(e.created_at)} · <code>{e.id}</code>
                        </summary>
                        <pre>{JSON.stringify(e, null, 2)}</pre>
                      </details>
                    </li>
                  ))}
                </ul>
                <LoadOlder pages={pages} what="events" />
              </>
            );
          }}
        </Loaded>
      </Section>
    </>
  );
}
