import { useState } from 'preact/hooks';
import { ApiFailure, describeError, formValues, ok } from '../../shared/api';
import { Link, navigate } from '../../shared/router';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useResource, useAction } from '../../shared/ui';
import type { Schemas } from '../../shared/api';
import { Breadcrumbs, Facts, handOverSecret, SecretReveal, Section, StateBadge, takeSecret } from '../components';
import { usePoll } from '../poll';
import { problemOf, ProblemNotice } from '../problem';
import { KeysetPage, LoadOlder, useKeysetPages } from '../keyset-pages';
import { PRODUCT } from '../product';
import { api } from '../session';
import { WEBHOOK_EVENT_TYPES, type App, type Delivery, type DeliverySummary, type WebhookEventType, type WebhookProfile } from '../types';

async function loadProfile(appId: string): Promise<WebhookProfile | null> {
  try {
    return await ok(api.GET('/v1/providers/apps/{app_id}/webhook', { params: { path: { app_id: appId } } }));
  } catch (error) {
    // No profile yet is a normal state of a new app.
    if (error instanceof ApiFailure && error.status === 404) return null;
    throw error;
  }
}

export function WebhookPage(props: { appId: string }) {
  const { appId } = props;
  const data = useResource(
    () =>
      Promise.all([ok(api.GET('/v1/providers/apps/{app_id}', { params: { path: { app_id: appId } } })), loadProfile(appId)]).then(
        ([app, profile]) => ({ app, profile }),
      ),
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
                  secret={profile}
                  rotate={async () => {
                    const rotated = await ok(
                      api.POST('/v1/providers/apps/{app_id}/webhook/secret', { params: { path: { app_id: appId } } }),
                    );
                    setSecret(rotated.secret ?? null);
                    data.setData({ app, profile: rotated });
                  }}
                />
                <TestEvent appId={appId} onSent={() => setLogVersion((v) => v + 1)} />
                <DeliveryLog appId={appId} version={logVersion} />
              </>
            )}
            <EndpointList appId={appId} />
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
  const save = useAction(async (form: HTMLFormElement) => {
    setSaved(false);
    const values = formValues(form);
    const url = values.url ?? '';
    const timeout = Number(values.timeout_seconds);
    const result = await ok(
      api.PUT('/v1/providers/apps/{app_id}/webhook', {
        params: { path: { app_id: app.id } },
        body: {
          url,
          event_types: types,
          ...(timeout ? { timeout_seconds: timeout } : {}),
          enabled: values.enabled === 'on',
        },
      }),
    );
    setSaved(true);
    props.onSaved(result);
  });
  const problem = problemOf(save.failure);
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
        <EventTypeChoice types={types} onChange={setTypes} />
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
        <ProblemNotice error={save.failure} />
        <Button type="submit" variant="primary" busy={save.busy}>
          Save webhook profile
        </Button>
      </form>
    </Section>
  );
}

/** Subscribed types as checkboxes: "all" (`*`) or a choice of the named ones. */
function EventTypeChoice(props: { types: string[]; onChange: (types: string[]) => void }) {
  const { types } = props;
  const all = types.includes('*');
  const toggle = (type: string, on: boolean) => props.onChange(on ? [...types, type] : types.filter((t) => t !== type));
  return (
    <fieldset class="field checkboxes">
      <legend>Event types</legend>
      <label>
        <input type="checkbox" checked={all} onChange={(event) => props.onChange(event.currentTarget.checked ? ['*'] : [])} /> All event
        types (<code>*</code>)
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
  );
}

type SecretFacts = Pick<WebhookProfile, 'secret_rotated_at' | 'previous_secret_expires_at' | 'secret_rotation_due'>;

/** When the signing secret was rotated, and its rotation behind a confirmation (the new secret is revealed by the caller). */
function SigningSecret(props: { secret: SecretFacts; rotate: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const rotate = useAction(async () => {
    await props.rotate();
    setConfirming(false);
  });
  const profile = props.secret;
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
        error={rotate.failure ? describeError(rotate.failure) : null}
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

/** A test event to the webhook profile, or to one endpoint (`endpointId`). */
function TestEvent(props: { appId: string; endpointId?: string; onSent: () => void }) {
  const { appId, endpointId } = props;
  const [type, setType] = useState<WebhookEventType>(WEBHOOK_EVENT_TYPES[0]);
  const [sent, setSent] = useState<DeliverySummary | null>(null);
  const send = useAction(async () => {
    const call = endpointId
      ? api.POST('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}/test', {
          params: { path: { app_id: appId, endpoint_id: endpointId } },
          body: { type },
        })
      : api.POST('/v1/providers/apps/{app_id}/webhook/test', { params: { path: { app_id: appId } }, body: { type } });
    setSent(await ok(call));
    props.onSent();
  });
  return (
    <Section title="Send a test event">
      <p>A signed event with sample data, marked as a test, delivered like any other.</p>
      <div class="inline-form">
        <div class="field">
          <label for="test-event-type">Event type</label>
          <select id="test-event-type" value={type} onChange={(event) => setType(event.currentTarget.value as WebhookEventType)}>
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
      <ProblemNotice error={send.failure} />
    </Section>
  );
}

/** The developer's packages by id, so a delivery shows the name of the package it concerns. */
function usePackageNames() {
  return useResource(
    () => ok(api.GET('/v1/providers/packages')).then((r) => new Map(r.packages.map((p) => [p.id, p.name] as [string, string]))),
    [],
  );
}

/** The package a delivery concerns, linked to its page; "—" when it concerns none. */
function PackageCell(props: { packageId: string | null; names: Map<string, string> | undefined }) {
  if (!props.packageId) return <>—</>;
  return <Link href={`/packages/${props.packageId}`}>{props.names?.get(props.packageId) ?? props.packageId}</Link>;
}

/** The webhook profile's delivery log, or one endpoint's (`endpointId`). */
function DeliveryLog(props: { appId: string; endpointId?: string; version: number }) {
  const [status, setStatus] = useState('');
  const [packageId, setPackageId] = useState('');
  const names = usePackageNames();
  const page = (next: string | null) => {
    const query = {
      ...(status ? { status: status as DeliverySummary['status'] } : {}),
      ...(packageId ? { package_id: packageId } : {}),
      ...(next ? { cursor: next } : {}),
    };
    return ok(
      props.endpointId
        ? api.GET('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}/deliveries', {
            params: { path: { app_id: props.appId, endpoint_id: props.endpointId }, query },
          })
        : api.GET('/v1/providers/apps/{app_id}/webhook/deliveries', { params: { path: { app_id: props.appId }, query } }),
    );
  };
  const pages = useKeysetPages(
    async (next): Promise<KeysetPage<DeliverySummary>> => {
      const loaded = await page(next);
      return { items: loaded.deliveries, next: loaded.next_cursor };
    },
    [props.appId, props.endpointId, props.version, status, packageId],
  );
  const { first: log, more } = pages;
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
        <label for="delivery-package">Package</label>
        <select id="delivery-package" value={packageId} onChange={(event) => setPackageId(event.currentTarget.value)}>
          <option value="">Any package</option>
          {[...(names.data ?? new Map<string, string>())].map(([id, name]) => (
            <option key={id} value={id}>
              {name}
            </option>
          ))}
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
                      <th scope="col">Package</th>
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
                        <td>
                          <PackageCell packageId={d.package_id} names={names.data} />
                        </td>
                        <td>{formatDate(d.created_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <LoadOlder pages={pages} what="deliveries" />
            </>
          );
        }}
      </Loaded>
    </Section>
  );
}

/** One delivery, followed while it is pending, and its replay (which opens the copy, saying what it replays). */
function useDelivery(appId: string, deliveryId: string) {
  const delivery = useResource(
    () =>
      ok(
        api.GET('/v1/providers/apps/{app_id}/webhook/deliveries/{delivery_id}', {
          params: { path: { app_id: appId, delivery_id: deliveryId } },
        }),
      ),
    [appId, deliveryId],
  );
  usePoll(delivery.reload, delivery.data?.status === 'pending', 1000);
  const replay = useAction(async () => {
    const copy = await ok(
      api.POST('/v1/providers/apps/{app_id}/webhook/deliveries/{delivery_id}/replay', {
        params: { path: { app_id: appId, delivery_id: deliveryId } },
      }),
    );
    navigate(`/apps/${appId}/deliveries/${copy.id}?replayed=${encodeURIComponent(deliveryId)}`);
  });
  return { delivery, replay };
}

function DeliverySummarySection(props: { appId: string; delivery: Delivery }) {
  const { appId, delivery } = props;
  const names = usePackageNames();
  return (
    <Section title="Summary">
      <Facts
        items={[
          ['Status', <StateBadge key="s" state={delivery.status} />],
          ['Delivery id', <code key="id">{delivery.id}</code>],
          ['Event id', <code key="e">{delivery.event_id}</code>],
          ['Package', <PackageCell key="p" packageId={delivery.package_id} names={names.data} />],
          [
            'Idempotency key',
            <code key="k" class="break">
              {delivery.idempotency_key}
            </code>,
          ],
          ['Attempts', String(delivery.attempt_count)],
          ['Next attempt', delivery.next_attempt_at ? formatDate(delivery.next_attempt_at) : '—'],
          ['Created', formatDate(delivery.created_at)],
          ['Delivered', formatDate(delivery.delivered_at)],
          ['Failed', formatDate(delivery.failed_at)],
          ['Test event', delivery.test ? 'Yes' : 'No'],
          [
            'Replay of',
            delivery.replay_of ? (
              <Link key="r" href={`/apps/${appId}/deliveries/${delivery.replay_of}`}>
                {delivery.replay_of}
              </Link>
            ) : (
              '—'
            ),
          ],
        ]}
      />
    </Section>
  );
}

function AttemptsSection(props: { attempts: Delivery['attempts'] }) {
  return (
    <Section title="Attempts">
      {props.attempts.length === 0 ? (
        <EmptyState>No attempt yet.</EmptyState>
      ) : (
        <ol class="attempts">
          {props.attempts.map((a) => (
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
  );
}

export function DeliveryPage(props: { appId: string; deliveryId: string }) {
  const { appId, deliveryId } = props;
  const { delivery, replay } = useDelivery(appId, deliveryId);
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
            <ProblemNotice error={replay.failure} />
            <DeliverySummarySection appId={appId} delivery={d} />
            <AttemptsSection attempts={d.attempts} />
            <Section title="Payload">
              <pre>{JSON.stringify(d.payload, null, 2)}</pre>
            </Section>
          </>
        )}
      </Loaded>
    </>
  );
}

type Endpoint = Schemas['WebhookEndpointDto'];
type Ping = NonNullable<Endpoint['last_ping']>;

const endpointPath = (appId: string, endpointId: string) => `/apps/${appId}/webhook/endpoints/${endpointId}`;
const endpointParams = (appId: string, endpointId: string) => ({ params: { path: { app_id: appId, endpoint_id: endpointId } } });

/** What the latest endpoint check found, in words: reachable, and whether the receiver verifies signatures. */
function PingResult(props: { appId: string; ping: Ping | null; enabled: boolean }) {
  const { ping } = props;
  if (!ping) {
    return <p>{props.enabled ? 'Not checked yet: “Check again” sends a signed ping.' : 'Not checked: a paused endpoint gets no ping.'}</p>;
  }
  const answer = ping.status_code === null ? (ping.error ?? 'no answer') : `HTTP ${ping.status_code}`;
  const log = <Link href={`/apps/${props.appId}/deliveries/${ping.delivery_id}`}>See the ping in the log</Link>;
  if (!ping.ok) {
    return (
      <Notice kind="error">
        The signed ping failed: {answer} after {ping.latency_ms} ms. If your receiver does not know the signing secret yet, store it there
        and check again. {log}.
      </Notice>
    );
  }
  if (ping.signature_check === 'verified') {
    return (
      <Notice kind="success">
        Reachable ({answer} in {ping.latency_ms} ms), and it refused a ping with a wrong signature: your receiver verifies signatures. {log}
        .
      </Notice>
    );
  }
  if (ping.signature_check === 'not_verified') {
    return (
      <Notice kind="error">
        Reachable ({answer} in {ping.latency_ms} ms), but it also accepted a ping with a wrong signature: your receiver does not verify
        signatures. Check <code>X-Service-Signature</code> or <code>webhook-signature</code> before trusting a delivery. {log}.
      </Notice>
    );
  }
  return (
    <Notice kind="info">
      Reachable ({answer} in {ping.latency_ms} ms). A ping with a wrong signature got neither a 2xx nor a 4xx, so whether your receiver
      verifies signatures is not known. {log}.
    </Notice>
  );
}

function pingWord(ping: Ping | null): string {
  if (!ping) return 'Not checked';
  if (!ping.ok) return `Failed (${ping.status_code ?? ping.error ?? 'no answer'})`;
  return { verified: 'Verifies signatures', not_verified: 'Does not verify signatures', unknown: 'Reachable' }[ping.signature_check];
}

/** Every endpoint of the app, and a form to add one (its secret and check result show on its page). */
function EndpointList(props: { appId: string }) {
  const { appId } = props;
  const list = useResource(
    () => ok(api.GET('/v1/providers/apps/{app_id}/webhook/endpoints', { params: { path: { app_id: appId } } })),
    [appId],
  );
  const [types, setTypes] = useState<string[]>(['*']);
  const add = useAction(async (form: HTMLFormElement) => {
    const values = formValues(form);
    const created = await ok(
      api.POST('/v1/providers/apps/{app_id}/webhook/endpoints', {
        params: { path: { app_id: appId } },
        body: { url: values.url ?? '', event_types: types, ...(values.description ? { description: values.description } : {}) },
      }),
    );
    if (created.secret) handOverSecret(`endpoint:${created.id}`, created.secret);
    navigate(endpointPath(appId, created.id));
  });
  const problem = problemOf(add.failure);
  return (
    <Section title="Endpoints">
      <p>Send events to more URLs, each with its own event types and signing secret. The webhook profile above is the first endpoint.</p>
      <Loaded resource={list}>
        {({ endpoints, limit }) => (
          <>
            {endpoints.length === 0 ? (
              <EmptyState>No endpoint yet.</EmptyState>
            ) : (
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">{`Webhook endpoints (${endpoints.length} of ${limit})`}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Endpoint</th>
                      <th scope="col">Event types</th>
                      <th scope="col">State</th>
                      <th scope="col">Last check</th>
                    </tr>
                  </thead>
                  <tbody>
                    {endpoints.map((e) => (
                      <tr key={e.id}>
                        <td>
                          <Link href={endpointPath(appId, e.id)}>{e.url ?? e.id}</Link>
                          {e.primary && <span class="badge">profile</span>}
                          {e.description && <div class="hint">{e.description}</div>}
                        </td>
                        <td>{e.event_types.join(', ')}</td>
                        <td>
                          <StateBadge state={e.enabled ? 'active' : 'paused'} />
                        </td>
                        <td>{pingWord(e.last_ping)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {endpoints.length < limit ? (
              <form
                class="endpoint-form"
                aria-label="Add an endpoint"
                onSubmit={(event) => {
                  event.preventDefault();
                  void add.run(event.currentTarget);
                }}
              >
                <h3>Add an endpoint</h3>
                <Field
                  label="New endpoint URL"
                  name="url"
                  type="url"
                  required
                  hint="HTTPS. A signed ping checks it as soon as it is added."
                  error={problem?.field === 'url' ? problem.detail : undefined}
                />
                <Field label="New endpoint description" name="description" maxLength={200} hint="Optional: what this endpoint is for." />
                <EventTypeChoice types={types} onChange={setTypes} />
                <ProblemNotice error={add.failure} />
                <Button type="submit" variant="primary" busy={add.busy}>
                  Add endpoint
                </Button>
              </form>
            ) : (
              <Notice kind="info">{`This app has ${limit} endpoints, the most an app may have.`}</Notice>
            )}
          </>
        )}
      </Loaded>
    </Section>
  );
}

/** One endpoint: its check, settings, signing secret, test events and delivery log. */
export function EndpointPage(props: { appId: string; endpointId: string }) {
  const { appId, endpointId } = props;
  const endpoint = useResource(
    () => ok(api.GET('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}', endpointParams(appId, endpointId))),
    [appId, endpointId],
  );
  const [secret, setSecret] = useState<string | null>(() => takeSecret(`endpoint:${endpointId}`));
  const [logVersion, setLogVersion] = useState(0);
  const recheck = useAction(async () => {
    endpoint.setData(
      await ok(api.POST('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}/ping', endpointParams(appId, endpointId))),
    );
    setLogVersion((v) => v + 1);
  });
  return (
    <>
      <Breadcrumbs
        items={[
          { href: '/apps', label: 'Apps' },
          { href: `/apps/${appId}`, label: appId },
          { href: `/apps/${appId}/webhook`, label: 'Webhooks' },
        ]}
      />
      <Loaded resource={endpoint}>
        {(e) => (
          <>
            <PageTitle product={PRODUCT}>{`Endpoint ${e.url ?? e.id}`}</PageTitle>
            {secret && <SecretReveal label="Endpoint signing secret" secret={secret} onDismiss={() => setSecret(null)} />}
            <Section
              title="Endpoint check"
              actions={
                <Button onClick={() => void recheck.run()} busy={recheck.busy} disabled={!e.enabled || recheck.busy}>
                  Check again
                </Button>
              }
            >
              <PingResult appId={appId} ping={e.last_ping} enabled={e.enabled} />
              <ProblemNotice error={recheck.failure} />
            </Section>
            <EndpointSettings
              endpoint={e}
              onSaved={(saved) => {
                endpoint.setData(saved);
                setLogVersion((v) => v + 1);
              }}
            />
            <SigningSecret
              secret={e}
              rotate={async () => {
                const rotated = await ok(
                  api.POST('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}/secret', endpointParams(appId, endpointId)),
                );
                setSecret(rotated.secret ?? null);
                endpoint.setData(rotated);
              }}
            />
            <TestEvent appId={appId} endpointId={endpointId} onSent={() => setLogVersion((v) => v + 1)} />
            <DeliveryLog appId={appId} endpointId={endpointId} version={logVersion} />
            {!e.primary && <DeleteEndpoint appId={appId} endpointId={endpointId} />}
          </>
        )}
      </Loaded>
    </>
  );
}

function EndpointSettings(props: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const { endpoint } = props;
  const [types, setTypes] = useState<string[]>(endpoint.event_types);
  const [saved, setSaved] = useState(false);
  const save = useAction(async (form: HTMLFormElement) => {
    setSaved(false);
    const values = formValues(form);
    const timeout = Number(values.timeout_seconds);
    const result = await ok(
      api.PATCH('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}', {
        ...endpointParams(endpoint.app_id, endpoint.id),
        body: {
          ...(values.url && values.url !== endpoint.url ? { url: values.url } : {}),
          description: values.description ?? '',
          event_types: types,
          ...(timeout ? { timeout_seconds: timeout } : {}),
          enabled: values.enabled === 'on',
        },
      }),
    );
    setSaved(true);
    props.onSaved(result);
  });
  const problem = problemOf(save.failure);
  return (
    <Section title="Settings">
      {!endpoint.enabled && (
        <Notice kind="error">
          Deliveries are paused{endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''}. Tick “Send deliveries” and save to turn
          them on again.
        </Notice>
      )}
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
          defaultValue={endpoint.url ?? ''}
          hint={endpoint.primary ? "The webhook profile's URL is the app's webhook_url." : 'A new URL is checked with a signed ping.'}
          error={problem?.field === 'url' || problem?.field === 'webhook_url' ? problem.detail : undefined}
        />
        <Field label="Description" name="description" maxLength={200} defaultValue={endpoint.description} />
        <EventTypeChoice types={types} onChange={setTypes} />
        <Field
          label="Timeout (seconds)"
          name="timeout_seconds"
          type="number"
          min={1}
          max={30}
          defaultValue={String(endpoint.timeout_seconds)}
          hint="1 to 30. Answer 2xx within it, or 202 and process later."
        />
        <div class="field checkboxes">
          <label>
            <input type="checkbox" name="enabled" defaultChecked={endpoint.enabled} /> Send deliveries
          </label>
        </div>
        {saved && <Notice kind="success">Endpoint saved.</Notice>}
        <ProblemNotice error={save.failure} />
        <Button type="submit" variant="primary" busy={save.busy}>
          Save endpoint
        </Button>
      </form>
    </Section>
  );
}

function DeleteEndpoint(props: { appId: string; endpointId: string }) {
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await ok(api.DELETE('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}', endpointParams(props.appId, props.endpointId)));
    navigate(`/apps/${props.appId}/webhook`);
  });
  return (
    <Section title="Delete endpoint">
      <p>Deleting the endpoint stops its deliveries and removes its delivery log.</p>
      <Button variant="danger" onClick={() => setConfirming(true)}>
        Delete endpoint
      </Button>
      <ConfirmDialog
        open={confirming}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        danger
        busy={remove.busy}
        error={remove.failure ? describeError(remove.failure) : null}
        onConfirm={() => void remove.run()}
        onCancel={() => {
          setConfirming(false);
          remove.setError(null);
        }}
      >
        <p>Events stop going to it at once, and its delivery log is deleted with it.</p>
      </ConfirmDialog>
    </Section>
  );
}
