import { useState } from 'preact/hooks';
import { describeError, formValues, ok, type Schemas } from '../../shared/api';
import { Link, navigate } from '../../shared/router';
import { Button, ConfirmDialog, Field, formatDate, Loaded, PageTitle, useResource, useAction } from '../../shared/ui';
import { Breadcrumbs, Facts, handOverSecret, ListPage, SecretReveal, Section, takeSecret } from '../components';
import { problemOf, ProblemNotice } from '../problem';
import { PRODUCT } from '../product';
import { api } from '../session';
import { PLATFORM_SCOPES, type App } from '../types';

export function loadApps(): Promise<App[]> {
  return ok(api.GET('/v1/providers/apps')).then((r) => r.apps);
}

export function AppsPage() {
  const apps = useResource(loadApps, []);
  return (
    <ListPage
      title="Apps"
      create={{ href: '/apps/new', label: 'Register an app' }}
      resource={apps}
      empty="No apps yet. Register one to get a client id and secret for the platform API."
      caption="Your apps"
      columns={['Name', 'Client id', 'Webhook URL', 'Created']}
      cells={(app) => (
        <>
          <td>
            <Link href={`/apps/${app.id}`}>{app.name}</Link>
          </td>
          <td>
            <code class="break">{app.client_id}</code>
          </td>
          <td class="break">{app.webhook_url ?? '—'}</td>
          <td>{formatDate(app.created_at)}</td>
        </>
      )}
    />
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
    // The checkboxes offer only PLATFORM_SCOPES.
    scopes: new FormData(form).getAll('scopes').map(String) as Array<(typeof PLATFORM_SCOPES)[number]>,
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
  const create = useAction(async (form: HTMLFormElement) => {
    const { webhook_url, ...body } = appBody(form);
    const app = await ok(api.POST('/v1/providers/apps', { body: { ...body, ...(webhook_url ? { webhook_url } : {}) } }));
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
        <AppFields error={create.failure} />
        <Button type="submit" variant="primary" busy={create.busy}>
          Register app
        </Button>
      </form>
    </>
  );
}

function EditApp(props: { app: App; onSaved: (app: App) => void; onCancel: () => void }) {
  const save = useAction(async (form: HTMLFormElement) => {
    const { webhook_url, ...fields } = appBody(form);
    const app = props.app;
    // Only what changed is sent: an untouched field cannot overwrite a change made meanwhile (the webhook page also
    // sets the webhook URL). An empty webhook URL leaves the current one.
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const body: Schemas['UpdateAppDto'] = {};
    if (fields.name !== app.name) body.name = fields.name;
    if (fields.description !== (app.description ?? '')) body.description = fields.description;
    if (!same(fields.redirect_uris, app.redirect_uris)) body.redirect_uris = fields.redirect_uris;
    if (!same([...fields.scopes].sort(), [...app.scopes].sort())) body.scopes = fields.scopes;
    if (webhook_url && webhook_url !== (app.webhook_url ?? '')) body.webhook_url = webhook_url;
    props.onSaved(
      Object.keys(body).length === 0
        ? app
        : await ok(api.PATCH('/v1/providers/apps/{app_id}', { params: { path: { app_id: app.id } }, body })),
    );
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void save.run(event.currentTarget);
      }}
    >
      <AppFields app={props.app} error={save.failure} />
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

/** Rotating the client secret: the dialog's state and the call. The new secret goes to `onRotated`, to be shown once. */
function useSecretRotation(appId: string, onRotated: (secret: string | null) => void) {
  const [confirming, setConfirming] = useState(false);
  const [grace, setGrace] = useState(0);
  const rotate = useAction(async () => {
    const rotated = await ok(
      api.POST('/v1/providers/apps/{app_id}/secret', { params: { path: { app_id: appId } }, body: { grace_period_seconds: grace } }),
    );
    onRotated(rotated.client_secret ?? null);
    setConfirming(false);
  });
  return { confirming, setConfirming, grace, setGrace, rotate };
}

function CredentialsSection(props: { app: App; onRotate: () => void }) {
  const { app } = props;
  return (
    <Section title="Credentials">
      <Facts
        items={[
          ['App id', <code key="id">{app.id}</code>],
          [
            'Client id',
            <code key="client" class="break">
              {app.client_id}
            </code>,
          ],
          ['Client secret', 'Hidden. It is shown once, when the app is created or the secret is rotated.'],
        ]}
      />
      <Button variant="danger" onClick={props.onRotate}>
        Rotate client secret
      </Button>
    </Section>
  );
}

function DetailsSection(props: { app: App; onSaved: (app: App) => void }) {
  const { app } = props;
  const [editing, setEditing] = useState(false);
  return (
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
          app={app}
          onCancel={() => setEditing(false)}
          onSaved={(saved) => {
            props.onSaved(saved);
            setEditing(false);
          }}
        />
      ) : (
        <>
          <Facts
            items={[
              ['Description', app.description || '—'],
              [
                'Redirect URIs',
                app.redirect_uris.length ? (
                  <ul key="uris" class="plain">
                    {app.redirect_uris.map((uri) => (
                      <li key={uri} class="break">
                        {uri}
                      </li>
                    ))}
                  </ul>
                ) : (
                  '—'
                ),
              ],
              ['Scopes', app.scopes.join(', ')],
              ['Webhook URL', app.webhook_url ?? 'Not set'],
              ['Created', formatDate(app.created_at)],
            ]}
          />
        </>
      )}
    </Section>
  );
}

function RotateSecretDialog(props: { rotation: ReturnType<typeof useSecretRotation> }) {
  const { confirming, setConfirming, grace, setGrace, rotate } = props.rotation;
  return (
    <ConfirmDialog
      open={confirming}
      title="Rotate the client secret?"
      confirmLabel="Rotate secret"
      danger
      busy={rotate.busy}
      error={rotate.failure ? describeError(rotate.failure) : null}
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
  );
}

export function AppDetailPage(props: { appId: string }) {
  const app = useResource(() => ok(api.GET('/v1/providers/apps/{app_id}', { params: { path: { app_id: props.appId } } })), [props.appId]);
  const [secret, setSecret] = useState(() => takeSecret(`app:${props.appId}`));
  const [webhookSecret, setWebhookSecret] = useState(() => takeSecret(`webhook:${props.appId}`));
  const rotation = useSecretRotation(props.appId, setSecret);
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
            <CredentialsSection app={data} onRotate={() => rotation.setConfirming(true)} />
            <DetailsSection
              app={data}
              onSaved={(saved) => {
                app.setData(saved);
                if (saved.webhook_secret) setWebhookSecret(saved.webhook_secret);
              }}
            />
            <RotateSecretDialog rotation={rotation} />
          </>
        )}
      </Loaded>
    </>
  );
}
