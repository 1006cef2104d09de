import { useState } from 'preact/hooks';
import { describeError, formValues } from '../../shared/api';
import { Link, navigate } from '../../shared/router';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, PageTitle, useResource } from '../../shared/ui';
import { Breadcrumbs, Facts, handOverSecret, SecretReveal, Section, takeSecret } from '../components';
import { problemOf, ProblemNotice, useCall } from '../problem';
import { PRODUCT } from '../product';
import { api } from '../session';
import { PLATFORM_SCOPES, type App } from '../types';

export function loadApps(): Promise<App[]> {
  return api<{ apps: App[] }>('GET', '/v1/providers/apps').then((r) => r.apps);
}

export function AppsPage() {
  const apps = useResource(loadApps, []);
  return (
    <>
      <PageTitle
        product={PRODUCT}
        actions={
          <Link href="/apps/new" class="button button-primary">
            Register an app
          </Link>
        }
      >
        Apps
      </PageTitle>
      <Loaded resource={apps}>
        {(list) =>
          list.length === 0 ? (
            <EmptyState>No apps yet. Register one to get a client id and secret for the platform API.</EmptyState>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Your apps</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Client id</th>
                    <th scope="col">Webhook URL</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((app) => (
                    <tr key={app.id}>
                      <td>
                        <Link href={`/apps/${app.id}`}>{app.name}</Link>
                      </td>
                      <td>
                        <code class="break">{app.client_id}</code>
                      </td>
                      <td class="break">{app.webhook_url ?? '—'}</td>
                      <td>{formatDate(app.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  );
}

function lines(text: string | undefined): string[] {
  return (text ?? '')
    .split(/\s*\n\s*/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The editable fields of an app, as the create and update bodies name them. */
function appBody(form: HTMLFormElement) {
  const values = formValues(form);
  return {
    name: values.name ?? '',
    description: values.description ?? '',
    redirect_uris: lines(values.redirect_uris),
    scopes: new FormData(form).getAll('scopes').map(String),
    webhook_url: values.webhook_url ?? '',
  };
}

function AppFields(props: { app?: App; error: unknown }) {
  const { app } = props;
  const problem = problemOf(props.error);
  const fieldError = (name: string) => (problem?.field?.startsWith(name) ? problem.detail : undefined);
  return (
    <>
      <Field label="Name" name="name" maxLength={100} required defaultValue={app?.name} error={fieldError('name')} />
      <Field
        label="Description"
        name="description"
        multiline
        maxLength={2000}
        defaultValue={app?.description}
        error={fieldError('description')}
      />
      <Field
        label="Redirect URIs"
        name="redirect_uris"
        multiline
        hint="OAuth redirect addresses, one per line."
        defaultValue={app?.redirect_uris.join('\n')}
        error={fieldError('redirect_uris')}
      />
      <fieldset class="field checkboxes">
        <legend>Scopes</legend>
        <p class="hint">What the app may be granted.{app ? '' : ' All are selected by default.'}</p>
        {PLATFORM_SCOPES.map((scope) => (
          <label key={scope}>
            <input type="checkbox" name="scopes" value={scope} defaultChecked={app ? app.scopes.includes(scope) : true} />{' '}
            <code>{scope}</code>
          </label>
        ))}
      </fieldset>
      <Field
        label="Webhook URL"
        name="webhook_url"
        type="url"
        hint="HTTPS endpoint for webhook deliveries. You can set it later."
        defaultValue={app?.webhook_url ?? ''}
        error={fieldError('webhook_url')}
      />
      <ProblemNotice error={props.error} />
    </>
  );
}

export function NewAppPage() {
  const create = useCall(async (form: HTMLFormElement) => {
    const { webhook_url, ...body } = appBody(form);
    const app = await api<App>('POST', '/v1/providers/apps', { ...body, ...(webhook_url ? { webhook_url } : {}) });
    if (app.client_secret) handOverSecret(`app:${app.id}`, app.client_secret);
    if (app.webhook_secret) handOverSecret(`webhook:${app.id}`, app.webhook_secret);
    navigate(`/apps/${app.id}`);
  });
  return (
    <>
      <Breadcrumbs items={[{ href: '/apps', label: 'Apps' }]} />
      <PageTitle product={PRODUCT}>Register an app</PageTitle>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void create.run(event.currentTarget);
        }}
      >
        <AppFields error={create.error} />
        <Button type="submit" variant="primary" busy={create.busy}>
          Register app
        </Button>
      </form>
    </>
  );
}

function EditApp(props: { app: App; onSaved: (app: App) => void; onCancel: () => void }) {
  const save = useCall(async (form: HTMLFormElement) => {
    const { webhook_url, ...fields } = appBody(form);
    const app = props.app;
    // Only what changed is sent: an untouched field cannot overwrite a change made meanwhile (the webhook page also
    // sets the webhook URL). An empty webhook URL leaves the current one.
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const body: Record<string, unknown> = {};
    if (fields.name !== app.name) body.name = fields.name;
    if (fields.description !== (app.description ?? '')) body.description = fields.description;
    if (!same(fields.redirect_uris, app.redirect_uris)) body.redirect_uris = fields.redirect_uris;
    if (!same([...fields.scopes].sort(), [...app.scopes].sort())) body.scopes = fields.scopes;
    if (webhook_url && webhook_url !== (app.webhook_url ?? '')) body.webhook_url = webhook_url;
    props.onSaved(Object.keys(body).length === 0 ? app : await api<App>('PATCH', `/v1/providers/apps/${app.id}`, body));
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void save.run(event.currentTarget);
      }}
    >
      <AppFields app={props.app} error={save.error} />
      <div class="actions">
        <Button type="submit" variant="primary" busy={save.busy}>
          Save changes
        </Button>
        <Button onClick={props.onCancel} disabled={save.busy}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

const GRACE_CHOICES: Array<[string, number]> = [
  ['Immediately', 0],
  ['After 1 hour', 3600],
  ['After 24 hours', 86400],
];

export function AppDetailPage(props: { appId: string }) {
  const app = useResource(() => api<App>('GET', `/v1/providers/apps/${props.appId}`), [props.appId]);
  const [secret, setSecret] = useState(() => takeSecret(`app:${props.appId}`));
  const [webhookSecret, setWebhookSecret] = useState(() => takeSecret(`webhook:${props.appId}`));
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  const [grace, setGrace] = useState(0);
  const rotate = useCall(async () => {
    const rotated = await api<App>('POST', `/v1/providers/apps/${props.appId}/secret`, { grace_period_seconds: grace });
    setSecret(rotated.client_secret ?? null);
    setConfirming(false);
  });
  return (
    <>
      <Breadcrumbs items={[{ href: '/apps', label: 'Apps' }]} />
      <Loaded resource={app}>
        {(data) => (
          <>
            <PageTitle
              product={PRODUCT}
              actions={
                <Link href={`/apps/${data.id}/webhook`} class="button button-secondary">
                  Webhooks
                </Link>
              }
            >
              {data.name}
            </PageTitle>
            {secret && <SecretReveal label="Client secret" secret={secret} onDismiss={() => setSecret(null)} />}
            {webhookSecret && (
              <SecretReveal label="Webhook signing secret" secret={webhookSecret} onDismiss={() => setWebhookSecret(null)} />
            )}
            <Section title="Credentials">
              <Facts
                items={[
                  ['App id', <code key="id">{data.id}</code>],
                  [
                    'Client id',
                    <code key="client" class="break">
                      {data.client_id}
                    </code>,
                  ],
                  ['Client secret', 'Hidden. It is shown once, when the app is created or the secret is rotated.'],
                ]}
              />
              <Button variant="danger" onClick={() => setConfirming(true)}>
                Rotate client secret
              </Button>
            </Section>
            <Section
              title="Details"
              actions={
                !editing && (
                  <Button onClick={() => setEditing(true)} aria-label="Edit app details">
                    Edit
                  </Button>
                )
              }
            >
              {editing ? (
                <EditApp
                  app={data}
                  onCancel={() => setEditing(false)}
                  onSaved={(saved) => {
                    app.setData(saved);
                    if (saved.webhook_secret) setWebhookSecret(saved.webhook_secret);
                    setEditing(false);
                  }}
                />
              ) : (
                <>
                  <Facts
                    items={[
                      ['Description', data.description || '—'],
                      [
                        'Redirect URIs',
                        data.redirect_uris.length ? (
                          <ul key="uris" class="plain">
                            {data.redirect_uris.map((uri) => (
                              <li key={uri} class="break">
                                {uri}
                              </li>
                            ))}
                          </ul>
                        ) : (
                          '—'
                        ),
                      ],
                      ['Scopes', data.scopes.join(', ')],
                      ['Webhook URL', data.webhook_url ?? 'Not set'],
                      ['Created', formatDate(data.created_at)],
                    ]}
                  />
                </>
              )}
            </Section>
            <ConfirmDialog
              open={confirming}
              title="Rotate the client secret?"
              confirmLabel="Rotate secret"
              danger
              busy={rotate.busy}
              error={rotate.error ? describeError(rotate.error) : null}
              onConfirm={() => void rotate.run()}
              onCancel={() => {
                setConfirming(false);
                rotate.setError(null);
              }}
            >
              <p>A new secret is issued and shown once. Tokens requested with the old secret fail once it stops working.</p>
              <div class="field">
                <label for="grace-period">Old secret stops working</label>
                <select id="grace-period" value={String(grace)} onChange={(event) => setGrace(Number(event.currentTarget.value))}>
                  {GRACE_CHOICES.map(([label, seconds]) => (
                    <option key={seconds} value={String(seconds)}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
            </ConfirmDialog>
          </>
        )}
      </Loaded>
    </>
  );
}
