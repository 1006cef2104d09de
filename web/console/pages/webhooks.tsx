import { useState } from 'preact/hooks';
import { ApiFailure, describeError, formValues } from '../../shared/api';
import { Link, navigate } from '../../shared/router';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useResource } from '../../shared/ui';
import { Breadcrumbs, Facts, SecretReveal, Section, StateBadge } from '../components';
import { usePoll } from '../poll';
import { problemOf, ProblemNotice, useCall } from '../problem';
import { PRODUCT } from '../product';
import { api } from '../session';
import { WEBHOOK_EVENT_TYPES, type App, type Delivery, type DeliverySummary, type WebhookProfile } from '../types';

async function loadProfile(appId: string): Promise<WebhookProfile | null> {
  try {
    return await api<WebhookProfile>('GET', `/v1/providers/apps/${appId}/webhook`);
  } catch (error) {
    // No profile yet is a normal state of a new app.
    if (error instanceof ApiFailure && error.status === 404) return null;
    throw error;
  }
}

export function WebhookPage(props: { appId: string }) {
  const { appId } = props;
  const data = useResource(
    () => Promise.all([api<App>('GET', `/v1/providers/apps/${appId}`), loadProfile(appId)]).then(([app, profile]) => ({ app, profile })),
    [appId],
  );
  const [secret, setSecret] = useState<string | null>(null);
  const [logVersion, setLogVersion] = useState(0);
  return (
    <>
      <Loaded resource={data}>
        {({ app, profile }) => (
          <>
            <Breadcrumbs
              items={[
                { href: '/apps', label: 'Apps' },
                { href: `/apps/${appId}`, label: app.name },
              ]}
            />
            <PageTitle product={PRODUCT}>{`Webhooks of ${app.name}`}</PageTitle>
            {secret && <SecretReveal label="New signing secret" secret={secret} onDismiss={() => setSecret(null)} />}
            <ProfileForm
              app={app}
              profile={profile}
              onSaved={(saved) => {
                if (saved.secret) setSecret(saved.secret);
                data.setData({ app: { ...app, webhook_url: saved.url }, profile: saved });
              }}
            />
            {profile && (
              <>
                <SigningSecret
                  appId={appId}
                  profile={profile}
                  onRotated={(rotated) => {
                    setSecret(rotated.secret ?? null);
                    data.setData({ app, profile: rotated });
                  }}
                />
                <TestEvent appId={appId} onSent={() => setLogVersion((v) => v + 1)} />
                <DeliveryLog appId={appId} version={logVersion} />
              </>
            )}
          </>
        )}
      </Loaded>
    </>
  );
}

function ProfileForm(props: { app: App; profile: WebhookProfile | null; onSaved: (profile: WebhookProfile) => void }) {
  const { app, profile } = props;
  const [types, setTypes] = useState<string[]>(profile?.event_types ?? ['*']);
  const [saved, setSaved] = useState(false);
  const all = types.includes('*');
  const save = useCall(async (form: HTMLFormElement) => {
    setSaved(false);
    const values = formValues(form);
    const url = values.url ?? '';
    const timeout = Number(values.timeout_seconds);
    const result = await api<WebhookProfile>('PUT', `/v1/providers/apps/${app.id}/webhook`, {
      url,
      event_types: all ? ['*'] : types,
      ...(timeout ? { timeout_seconds: timeout } : {}),
      enabled: values.enabled === 'on',
    });
    setSaved(true);
    props.onSaved(result);
  });
  const toggle = (type: string, on: boolean) => setTypes((current) => (on ? [...current, type] : current.filter((t) => t !== type)));
  const problem = problemOf(save.error);
  return (
    <Section title="Webhook profile">
      {profile && !profile.enabled && (
        <Notice kind="error">
          Deliveries are paused{profile.disabled_reason ? `: ${profile.disabled_reason}` : ''}. Tick “Send deliveries” and save the profile
          to turn them on again.
        </Notice>
      )}
      {!profile && <p>No profile yet. Saving one creates the signing secret, shown once.</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void save.run(event.currentTarget);
        }}
      >
        <Field
          label="Endpoint URL"
          name="url"
          type="url"
          required
          defaultValue={profile?.url ?? app.webhook_url ?? ''}
          hint="HTTPS with a valid certificate. Deliveries are signed with X-Service-Signature."
          error={problem?.field === 'url' || problem?.field === 'webhook_url' ? problem.detail : undefined}
        />
        <fieldset class="field checkboxes">
          <legend>Event types</legend>
          <label>
            <input type="checkbox" checked={all} onChange={(event) => setTypes(event.currentTarget.checked ? ['*'] : [])} /> All event types
            (<code>*</code>)
          </label>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label key={type}>
              <input
                type="checkbox"
                disabled={all}
                checked={all || types.includes(type)}
                onChange={(event) => toggle(type, event.currentTarget.checked)}
              />{' '}
              <code>{type}</code>
            </label>
          ))}
        </fieldset>
        <Field
          label="Timeout (seconds)"
          name="timeout_seconds"
          type="number"
          min={1}
          max={30}
          defaultValue={String(profile?.timeout_seconds ?? 5)}
          hint="1 to 30. Answer 2xx within it, or 202 and process later."
        />
        <div class="field checkboxes">
          <label>
            <input type="checkbox" name="enabled" defaultChecked={profile?.enabled ?? true} /> Send deliveries
          </label>
          <p class="hint">Untick to pause deliveries: events are then logged as failed and can be replayed later.</p>
        </div>
        {saved && <Notice kind="success">Webhook profile saved.</Notice>}
        <ProblemNotice error={save.error} />
        <Button type="submit" variant="primary" busy={save.busy}>
          Save webhook profile
        </Button>
      </form>
    </Section>
  );
}

function SigningSecret(props: { appId: string; profile: WebhookProfile; onRotated: (profile: WebhookProfile) => void }) {
  const [confirming, setConfirming] = useState(false);
  const rotate = useCall(async () => {
    const rotated = await api<WebhookProfile>('POST', `/v1/providers/apps/${props.appId}/webhook/secret`);
    setConfirming(false);
    props.onRotated(rotated);
  });
  const { profile } = props;
  return (
    <Section title="Signing secret">
      {profile.secret_rotation_due && <Notice kind="info">The secret is older than 90 days: rotate it.</Notice>}
      <Facts
        items={[
          ['Last rotated', formatDate(profile.secret_rotated_at)],
          ['Previous secret signs until', profile.previous_secret_expires_at ? formatDate(profile.previous_secret_expires_at) : '—'],
        ]}
      />
      <Button variant="danger" onClick={() => setConfirming(true)}>
        Rotate signing secret
      </Button>
      <ConfirmDialog
        open={confirming}
        title="Rotate the signing secret?"
        confirmLabel="Rotate signing secret"
        danger
        busy={rotate.busy}
        error={rotate.error ? describeError(rotate.error) : null}
        onConfirm={() => void rotate.run()}
        onCancel={() => {
          setConfirming(false);
          rotate.setError(null);
        }}
      >
        <p>The new secret is shown once. During a grace period deliveries carry a signature with the previous secret as well.</p>
      </ConfirmDialog>
    </Section>
  );
}

function TestEvent(props: { appId: string; onSent: () => void }) {
  const [type, setType] = useState<string>(WEBHOOK_EVENT_TYPES[0]);
  const [sent, setSent] = useState<DeliverySummary | null>(null);
  const send = useCall(async () => {
    setSent(await api<DeliverySummary>('POST', `/v1/providers/apps/${props.appId}/webhook/test`, { type }));
    props.onSent();
  });
  return (
    <Section title="Send a test event">
      <p>A signed event with sample data, marked as a test, delivered like any other.</p>
      <div class="inline-form">
        <div class="field">
          <label for="test-event-type">Event type</label>
          <select id="test-event-type" value={type} onChange={(event) => setType(event.currentTarget.value)}>
            {WEBHOOK_EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <Button variant="primary" onClick={() => void send.run()} busy={send.busy}>
          Send test event
        </Button>
      </div>
      {sent && (
        <Notice kind="success">
          Test event {sent.event_type} queued as <Link href={`/apps/${props.appId}/deliveries/${sent.id}`}>delivery {sent.id}</Link>.
        </Notice>
      )}
      <ProblemNotice error={send.error} />
    </Section>
  );
}

interface DeliveryPage {
  deliveries: DeliverySummary[];
  next_cursor: string | null;
}

function DeliveryLog(props: { appId: string; version: number }) {
  const [status, setStatus] = useState('');
  const [more, setMore] = useState<DeliverySummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const path = (next?: string | null) => {
    const query = new URLSearchParams();
    if (status) query.set('status', status);
    if (next) query.set('cursor', next);
    const text = query.toString();
    return `/v1/providers/apps/${props.appId}/webhook/deliveries${text ? `?${text}` : ''}`;
  };
  const log = useResource(async () => {
    const page = await api<DeliveryPage>('GET', path());
    setMore([]);
    setCursor(page.next_cursor);
    return page.deliveries;
  }, [props.appId, props.version, status]);
  const loadMore = useCall(async () => {
    const page = await api<DeliveryPage>('GET', path(cursor));
    setMore((current) => [...current, ...page.deliveries]);
    setCursor(page.next_cursor);
  });
  usePoll(
    log.reload,
    (log.data ?? []).some((d) => d.status === 'pending'),
    1000,
  );
  return (
    <Section
      title="Delivery log"
      actions={
        <Button onClick={log.reload} busy={log.loading}>
          Refresh
        </Button>
      }
    >
      <div class="field inline-field">
        <label for="delivery-status">Show</label>
        <select id="delivery-status" value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
          <option value="">All deliveries</option>
          <option value="pending">Pending</option>
          <option value="delivered">Delivered</option>
          <option value="failed">Failed</option>
        </select>
      </div>
      <Loaded resource={log}>
        {(first) => {
          const rows = [...first, ...more];
          if (rows.length === 0) return <EmptyState>No deliveries yet. Send a test event to see one here.</EmptyState>;
          return (
            <>
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Webhook deliveries, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Event</th>
                      <th scope="col">Status</th>
                      <th scope="col">Attempts</th>
                      <th scope="col">Last response</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((d) => (
                      <tr key={d.id}>
                        <td>
                          <Link href={`/apps/${props.appId}/deliveries/${d.id}`}>{d.event_type}</Link>
                          {d.test && <span class="badge">test</span>}
                          {d.replay_of && <span class="badge">replay</span>}
                          <div class="hint">
                            <code>{d.id}</code>
                          </div>
                        </td>
                        <td>
                          <StateBadge state={d.status} />
                        </td>
                        <td>{d.attempt_count}</td>
                        <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                        <td>{formatDate(d.created_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {cursor && (
                <Button onClick={() => void loadMore.run()} busy={loadMore.busy}>
                  Load older deliveries
                </Button>
              )}
              <ProblemNotice error={loadMore.error} />
            </>
          );
        }}
      </Loaded>
    </Section>
  );
}

export function DeliveryPage(props: { appId: string; deliveryId: string }) {
  const { appId, deliveryId } = props;
  const delivery = useResource(
    () => api<Delivery>('GET', `/v1/providers/apps/${appId}/webhook/deliveries/${deliveryId}`),
    [appId, deliveryId],
  );
  usePoll(delivery.reload, delivery.data?.status === 'pending', 1000);
  const replay = useCall(async () => {
    const copy = await api<DeliverySummary>('POST', `/v1/providers/apps/${appId}/webhook/deliveries/${deliveryId}/replay`);
    navigate(`/apps/${appId}/deliveries/${copy.id}?replayed=${encodeURIComponent(deliveryId)}`);
  });
  const replayedFrom = new URLSearchParams(location.search).get('replayed');
  return (
    <>
      <Breadcrumbs
        items={[
          { href: '/apps', label: 'Apps' },
          { href: `/apps/${appId}`, label: appId },
          { href: `/apps/${appId}/webhook`, label: 'Webhooks' },
        ]}
      />
      <Loaded resource={delivery}>
        {(d) => (
          <>
            <PageTitle
              product={PRODUCT}
              actions={
                <Button
                  variant="primary"
                  onClick={() => void replay.run()}
                  busy={replay.busy}
                  disabled={d.status === 'pending' || replay.busy}
                  aria-describedby={d.status === 'pending' ? 'replay-hint' : undefined}
                >
                  Replay delivery
                </Button>
              }
            >
              {`Delivery of ${d.event_type}`}
            </PageTitle>
            {d.status === 'pending' && (
              <p class="hint" id="replay-hint">
                Still pending: replay becomes available once it is delivered or failed.
              </p>
            )}
            {replayedFrom && (
              <Notice kind="success">
                Replayed <Link href={`/apps/${appId}/deliveries/${replayedFrom}`}>{replayedFrom}</Link> with the same event id and
                idempotency key.
              </Notice>
            )}
            <ProblemNotice error={replay.error} />
            <Section title="Summary">
              <Facts
                items={[
                  ['Status', <StateBadge key="s" state={d.status} />],
                  ['Delivery id', <code key="id">{d.id}</code>],
                  ['Event id', <code key="e">{d.event_id}</code>],
                  [
                    'Idempotency key',
                    <code key="k" class="break">
                      {d.idempotency_key}
                    </code>,
                  ],
                  ['Attempts', String(d.attempt_count)],
                  ['Next attempt', d.next_attempt_at ? formatDate(d.next_attempt_at) : '—'],
                  ['Created', formatDate(d.created_at)],
                  ['Delivered', formatDate(d.delivered_at)],
                  ['Failed', formatDate(d.failed_at)],
                  ['Test event', d.test ? 'Yes' : 'No'],
                  [
                    'Replay of',
                    d.replay_of ? (
                      <Link key="r" href={`/apps/${appId}/deliveries/${d.replay_of}`}>
                        {d.replay_of}
                      </Link>
                    ) : (
                      '—'
                    ),
                  ],
                ]}
              />
            </Section>
            <Section title="Attempts">
              {d.attempts.length === 0 ? (
                <EmptyState>No attempt yet.</EmptyState>
              ) : (
                <ol class="attempts">
                  {d.attempts.map((a) => (
                    <li key={a.attempt}>
                      <h3>{`Attempt ${a.attempt}`}</h3>
                      <Facts
                        items={[
                          ['Outcome', <StateBadge key="o" state={a.outcome} />],
                          ['Status code', a.status_code === null ? 'No response' : String(a.status_code)],
                          ['Time', a.latency_ms === null ? '—' : `${a.latency_ms} ms`],
                          ['Started', formatDate(a.started_at)],
                          ['Error', a.error_class ?? '—'],
                        ]}
                      />
                      <figure class="response-body">
                        <figcaption>Response body</figcaption>
                        <pre>{a.response_body || '(empty)'}</pre>
                      </figure>
                      <details>
                        <summary>Request headers</summary>
                        <pre>{JSON.stringify(a.request_headers, null, 2)}</pre>
                      </details>
                    </li>
                  ))}
                </ol>
              )}
            </Section>
            <Section title="Payload">
              <pre>{JSON.stringify(d.payload, null, 2)}</pre>
            </Section>
          </>
        )}
      </Loaded>
    </>
  );
}
