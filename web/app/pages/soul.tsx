import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, bearer, describeError, idempotent, newIdempotencyKey, ok, publicApi, type Schemas } from '../../shared/api';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useAction, useResource } from '../../shared/ui';
import { PRODUCT } from '../product';
import { api, session } from '../session';

type Soul = Schemas['SoulDto'];

type ExportResult = Schemas['ExportResultDto'];

const COMMUNICATION_STYLES = ['direct', 'diplomatic', 'analytical', 'expressive'];
const HUMOUR_STYLES = ['none', 'dry', 'playful', 'witty'];

function scale(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : null;
}

function Trait(props: { label: string; low: string; high: string; value: unknown }) {
  const value = scale(props.value);
  return (
    <div class="stat">
      <dt>{props.label}</dt>
      <dd>
        {value === null ? (
          '—'
        ) : (
          <>
            <meter
              min={0}
              max={1}
              value={value}
              aria-label={`${props.label}: ${Math.round(value * 100)}% (${props.low} to ${props.high})`}
            />{' '}
            {Math.round(value * 100)}% <span class="muted">({value < 0.5 ? props.low : value > 0.5 ? props.high : 'balanced'})</span>
          </>
        )}
      </dd>
    </div>
  );
}

function parseValues(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * The edit form starts from the saved record, every field of it, and a save
 * sends only what the user changed: an untouched trait is never sent, so it
 * cannot be reset to a form default (or overwrite an edit made elsewhere).
 */
function SoulEditForm(props: { soul: Soul; onSaved: (soul: Soul) => void; onCancel: () => void }) {
  const { soul } = props;
  const traits = soul.traits ?? {};
  const initial = {
    communication_style: typeof traits.communication_style === 'string' ? traits.communication_style : '',
    humour: typeof traits.humour === 'string' ? traits.humour : '',
    formality: scale(traits.formality),
    empathy: scale(traits.empathy),
    values: soul.values.join('\n'),
  };
  const [form, setForm] = useState(initial);
  const [unchanged, setUnchanged] = useState(false);
  const save = useAction(async () => {
    const changedTraits: Record<string, unknown> = {};
    if (form.communication_style !== initial.communication_style && form.communication_style)
      changedTraits.communication_style = form.communication_style;
    if (form.humour !== initial.humour && form.humour) changedTraits.humour = form.humour;
    if (form.formality !== initial.formality && form.formality !== null) changedTraits.formality = form.formality;
    if (form.empathy !== initial.empathy && form.empathy !== null) changedTraits.empathy = form.empathy;
    const values = parseValues(form.values);
    const body: Record<string, unknown> = {};
    if (Object.keys(changedTraits).length > 0) body.traits = changedTraits;
    if (values.join('\n') !== soul.values.join('\n')) body.values = values;
    if (Object.keys(body).length === 0) {
      setUnchanged(true);
      props.onCancel();
      return;
    }
    props.onSaved(await ok(api.PATCH('/v1/soul', { body })));
  });
  const choices = (known: string[], saved: string) => (saved && !known.includes(saved) ? [saved, ...known] : known);
  const percent = (value: number | null) => (value === null ? 50 : Math.round(value * 100));
  return (
    <form
      class="card"
      aria-labelledby="edit-soul"
      onSubmit={(event) => {
        event.preventDefault();
        setUnchanged(false);
        void save.run();
      }}
    >
      <h2 id="edit-soul">Edit traits and values</h2>
      <div class="field">
        <label for="communication_style">Communication style</label>
        <select
          id="communication_style"
          name="communication_style"
          value={form.communication_style}
          onChange={(e) => setForm({ ...form, communication_style: e.currentTarget.value })}
        >
          {!initial.communication_style && <option value="">Not set</option>}
          {choices(COMMUNICATION_STYLES, initial.communication_style).map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="humour">Humour</label>
        <select id="humour" name="humour" value={form.humour} onChange={(e) => setForm({ ...form, humour: e.currentTarget.value })}>
          {!initial.humour && <option value="">Not set</option>}
          {choices(HUMOUR_STYLES, initial.humour).map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <Field
        label="Formality (0 casual – 100 formal)"
        name="formality"
        type="range"
        min={0}
        max={100}
        value={String(percent(form.formality))}
        hint={form.formality === null ? 'Not set yet.' : `${percent(form.formality)}`}
        onInput={(e) => setForm({ ...form, formality: Number(e.currentTarget.value) / 100 })}
      />
      <Field
        label="Empathy (0 matter-of-fact – 100 warm)"
        name="empathy"
        type="range"
        min={0}
        max={100}
        value={String(percent(form.empathy))}
        hint={form.empathy === null ? 'Not set yet.' : `${percent(form.empathy)}`}
        onInput={(e) => setForm({ ...form, empathy: Number(e.currentTarget.value) / 100 })}
      />
      <Field
        label="Values"
        name="values"
        multiline
        hint="One per line or separated by commas; at most 20, each up to 40 characters."
        value={form.values}
        onInput={(e) => setForm({ ...form, values: e.currentTarget.value })}
      />
      {unchanged && <Notice kind="info">Nothing changed.</Notice>}
      {save.error && <Notice kind="error">{save.error}</Notice>}
      <div class="row">
        <Button type="submit" variant="primary" busy={save.busy}>
          Save
        </Button>
        <Button onClick={props.onCancel}>Cancel</Button>
      </div>
    </form>
  );
}

function SoulRecord(props: { soul: Soul; onSaved: (soul: Soul) => void }) {
  const { soul } = props;
  const [editing, setEditing] = useState(false);
  const traits = soul.traits ?? {};
  if (editing) {
    return (
      <SoulEditForm
        soul={soul}
        onSaved={(updated) => {
          props.onSaved(updated);
          setEditing(false);
        }}
        onCancel={() => setEditing(false)}
      />
    );
  }
  return (
    <section class="card" aria-labelledby="traits-heading">
      <h2 id="traits-heading">Traits</h2>
      <dl class="stat-row">
        <div class="stat">
          <dt>Communication style</dt>
          <dd>{typeof traits.communication_style === 'string' ? traits.communication_style : '—'}</dd>
        </div>
        <div class="stat">
          <dt>Humour</dt>
          <dd>{typeof traits.humour === 'string' ? traits.humour : '—'}</dd>
        </div>
        <Trait label="Formality" low="casual" high="formal" value={traits.formality} />
        <Trait label="Empathy" low="matter-of-fact" high="warm" value={traits.empathy} />
      </dl>
      <h2 id="values-heading">Values</h2>
      {soul.values.length === 0 ? (
        <EmptyState>No values yet.</EmptyState>
      ) : (
        <ul class="tags" aria-labelledby="values-heading">
          {soul.values.map((v) => (
            <li key={v} class="badge">
              {v}
            </li>
          ))}
        </ul>
      )}
      <p class="muted">Last updated {formatDate(soul.updated_at)}</p>
      <Button onClick={() => setEditing(true)}>Edit traits and values</Button>
    </section>
  );
}

/** Asks for an export, polls it until it is built, then offers it as a download (the export needs the bearer token, so it is fetched here). */
function ExportPanel() {
  const [format, setFormat] = useState<ExportResult['format']>('json');
  const [exported, setExported] = useState<ExportResult | null>(null);
  const [download, setDownload] = useState<{ url: string; name: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const cancelled = useRef(false);
  useEffect(() => {
    cancelled.current = false;
    return () => {
      cancelled.current = true;
    };
  }, []);
  useEffect(() => () => download && URL.revokeObjectURL(download.url), [download]);

  const poll = async (result: ExportResult) => {
    for (let attempt = 0; attempt < 60 && !cancelled.current; attempt += 1) {
      // The file itself (a blob), with the session's token but outside its sign-out on 401: a refused download is
      // reported here, as it always was.
      const { data, error, response } = await publicApi.GET('/v1/exports/{export_id}', {
        params: { path: { export_id: result.id } },
        headers: bearer(session.get()?.token ?? ''),
        parseAs: 'blob',
      });
      if (response.status === 200) {
        const blob = data as Blob;
        const disposition = response.headers.get('content-disposition') ?? '';
        const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? `soul-export.${result.format === 'markdown' ? 'md' : 'json'}`;
        setExported({ ...result, status: 'ready' });
        setDownload({ url: URL.createObjectURL(blob), name });
        return;
      }
      if (response.status !== 202) {
        let message = `The export could not be fetched (status ${response.status}).`;
        const body = error as { error?: { message?: unknown } } | undefined;
        if (typeof body?.error?.message === 'string' && body.error.message) message = body.error.message;
        throw new ApiFailure(response.status, 'export_failed', message, null);
      }
      const retryAfter = Number(response.headers.get('retry-after'));
      const wait = Math.min(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 1000, 2000) * (attempt < 3 ? 0.5 : 1);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    if (!cancelled.current) throw new Error('The export is taking longer than expected. Try again in a few minutes.');
  };

  const request = async () => {
    setBusy(true);
    setError(null);
    setDownload(null);
    try {
      const result = await ok(api.POST('/v1/soul/export', { body: { format }, headers: idempotent(newIdempotencyKey()) }));
      setExported(result);
      await poll(result);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="export-heading">
      <h2 id="export-heading">Export your data</h2>
      <p>A copy of your soul record, contacts, messages and installs. The file is available for 24 hours.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void request();
        }}
      >
        <div class="field">
          <label for="export-format">Format</label>
          <select id="export-format" value={format} onChange={(e) => setFormat(e.currentTarget.value as ExportResult['format'])}>
            <option value="json">JSON</option>
            <option value="markdown">Markdown</option>
          </select>
        </div>
        <Button type="submit" variant="primary" busy={busy}>
          Request export
        </Button>
      </form>
      <div role="status">
        {exported && !download && busy && <p>Preparing your export…</p>}
        {exported && download && (
          <p>
            Your export is ready (until {formatDate(exported.expires_at)}):{' '}
            <a href={download.url} download={download.name}>
              Download {download.name}
            </a>
          </p>
        )}
      </div>
      {error && <Notice kind="error">{error}</Notice>}
    </section>
  );
}

function DeletePanel(props: { onDeleted: (message: string) => void }) {
  const [open, setOpen] = useState(false);
  const remove = useAction(async () => {
    const result = await ok(api.DELETE('/v1/soul'));
    setOpen(false);
    props.onDeleted(result.message);
  });
  return (
    <section class="card danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete your soul record</h2>
      <p>Deletes your traits, values and everything derived from them, including your exports. This cannot be undone.</p>
      <Button variant="danger" onClick={() => setOpen(true)}>
        Delete soul record…
      </Button>
      <ConfirmDialog
        open={open}
        title="Delete your soul record permanently?"
        confirmLabel="Delete permanently"
        danger
        busy={remove.busy}
        error={remove.error}
        onConfirm={() => void remove.run()}
        onCancel={() => setOpen(false)}
      >
        <p>
          <strong>This is permanent and cannot be undone.</strong> Your traits, values, exports and the agent actions drafted from them are
          deleted. Your account, contacts, messages and installed packages stay.
        </p>
      </ConfirmDialog>
    </section>
  );
}

export function SoulPage() {
  const soul = useResource(async () => {
    try {
      return await ok(api.GET('/v1/soul'));
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 404) return null;
      throw failure;
    }
  }, []);
  const [deleted, setDeleted] = useState<string | null>(null);
  return (
    <>
      <PageTitle product={PRODUCT}>Soul record</PageTitle>
      {deleted && <Notice kind="success">{deleted}</Notice>}
      <Loaded resource={soul}>
        {(data) =>
          data === null ? (
            <EmptyState>You have no soul record{deleted ? ' any more' : ''}.</EmptyState>
          ) : (
            <>
              <SoulRecord soul={data} onSaved={soul.setData} />
              <ExportPanel />
              <DeletePanel
                onDeleted={(message) => {
                  setDeleted(message);
                  soul.setData(null);
                }}
              />
            </>
          )
        }
      </Loaded>
    </>
  );
}
