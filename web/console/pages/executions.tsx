import { useState } from 'preact/hooks';
import { formValues, ok, type Schemas } from '../../shared/api';
import { Link, navigate } from '../../shared/router';
import { Button, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useResource } from '../../shared/ui';
import { Breadcrumbs, Facts, Section, StateBadge } from '../components';
import { KeysetPage, LoadOlder, useKeysetPages } from '../keyset-pages';
import { PRODUCT } from '../product';
import { api } from '../session';
import './executions.css';

type ExecutionSummary = Schemas['ExecutionSummaryDto'];
type Execution = Schemas['ExecutionDetailDto'];
type Phase = Execution['phases'][number];

/** What the log may be filtered by; empty strings are "any". */
interface Filters {
  app_id: string;
  package_id: string;
  capability: string;
  install_id: string;
  outcome: string;
  error_code: string;
  since: string;
  until: string;
}

const NO_FILTERS: Filters = {
  app_id: '',
  package_id: '',
  capability: '',
  install_id: '',
  outcome: '',
  error_code: '',
  since: '',
  until: '',
};
const OUTCOMES = ['ok', 'degraded', 'cached', 'pending', 'failed'] as const;
type Outcome = (typeof OUTCOMES)[number];
const REQUEST_ID = /^req_[0-9A-Za-z]{22}$/;

/** A `datetime-local` value (the browser's local time) as the ISO instant the API takes. */
function toInstant(local: string): string | undefined {
  if (!local) return undefined;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

function queryOf(filters: Filters, cursor: string | null) {
  return {
    ...(filters.app_id ? { app_id: filters.app_id } : {}),
    ...(filters.package_id ? { package_id: filters.package_id } : {}),
    ...(filters.capability ? { capability: filters.capability } : {}),
    ...(filters.install_id ? { install_id: filters.install_id } : {}),
    ...(filters.outcome ? { outcome: filters.outcome as Outcome } : {}),
    ...(filters.error_code ? { error_code: filters.error_code } : {}),
    ...(toInstant(filters.since) ? { since: toInstant(filters.since) } : {}),
    ...(toInstant(filters.until) ? { until: toInstant(filters.until) } : {}),
    ...(cursor ? { cursor } : {}),
  };
}

/** The developer's apps and packages, for the filters' choices and the names in the list. */
function useChoices() {
  return useResource(
    () =>
      Promise.all([ok(api.GET('/v1/providers/apps')), ok(api.GET('/v1/providers/packages'))]).then(([apps, packages]) => ({
        apps: apps.apps,
        packages: packages.packages,
      })),
    [],
  );
}

/** Jumps to one call by the request id a user or the runtime's logs gave. */
function FindByRequestId() {
  const [error, setError] = useState<string | undefined>();
  return (
    <Section title="Find a call by request id">
      <p>
        Every call carries its request id to your runtime in <code>X-Service-Request-Id</code> (and the runtime token's <code>rid</code>{' '}
        claim), and a failed call through the execute route answers it as <code>request_id</code>.
      </p>
      <form
        class="inline-form"
        role="search"
        aria-label="Find a call by request id"
        onSubmit={(event) => {
          event.preventDefault();
          const id = (formValues(event.currentTarget).request_id ?? '').trim();
          if (!REQUEST_ID.test(id)) {
            setError('A request id is req_ followed by 22 letters or digits.');
            return;
          }
          setError(undefined);
          navigate(`/executions/${id}`);
        }}
      >
        <Field label="Request id" name="request_id" placeholder="req_…" required error={error} autoComplete="off" spellcheck={false} />
        <Button type="submit" variant="primary">
          Find call
        </Button>
      </form>
    </Section>
  );
}

function FilterForm(props: { choices: ReturnType<typeof useChoices>['data']; filters: Filters; onApply: (filters: Filters) => void }) {
  const { choices, filters } = props;
  return (
    <form
      class="execution-filters"
      aria-label="Filter executions"
      onSubmit={(event) => {
        event.preventDefault();
        props.onApply({ ...NO_FILTERS, ...(formValues(event.currentTarget) as Partial<Filters>) });
      }}
    >
      {choices && choices.apps.length > 1 && (
        <div class="field">
          <label for="filter-app">App</label>
          <select id="filter-app" name="app_id" defaultValue={filters.app_id}>
            <option value="">All apps</option>
            {choices.apps.map((app) => (
              <option key={app.id} value={app.id}>
                {app.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="field">
        <label for="filter-package">Package</label>
        <select id="filter-package" name="package_id" defaultValue={filters.package_id}>
          <option value="">Any package</option>
          {(choices?.packages ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </div>
      <Field label="Capability" name="capability" defaultValue={filters.capability} autoComplete="off" />
      <div class="field">
        <label for="filter-outcome">Outcome</label>
        <select id="filter-outcome" name="outcome" defaultValue={filters.outcome}>
          <option value="">Any outcome</option>
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      <Field label="Error code" name="error_code" defaultValue={filters.error_code} autoComplete="off" placeholder="e.g. CONFLICT" />
      <Field label="Install id" name="install_id" defaultValue={filters.install_id} autoComplete="off" placeholder="inst_…" />
      <Field label="From" name="since" type="datetime-local" defaultValue={filters.since} />
      <Field label="Until" name="until" type="datetime-local" defaultValue={filters.until} />
      <div class="filter-actions">
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
        <Button type="reset" onClick={() => props.onApply(NO_FILTERS)}>
          Clear
        </Button>
      </div>
    </form>
  );
}

function ExecutionTable(props: { rows: ExecutionSummary[]; packageNames: Map<string, string> }) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Capability executions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Request id</th>
            <th scope="col">Capability</th>
            <th scope="col">Outcome</th>
            <th scope="col">Error</th>
            <th scope="col">Attempts</th>
            <th scope="col">Duration</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((e) => (
            <tr key={e.request_id}>
              <td>
                <Link href={`/executions/${e.request_id}`}>
                  <code>{e.request_id}</code>
                </Link>
              </td>
              <td>
                {e.capability}
                <div class="hint">
                  {props.packageNames.get(e.package_id) ?? e.package_id} · {e.mode} · {e.trigger}
                </div>
              </td>
              <td>
                <StateBadge state={e.outcome} />
              </td>
              <td>{e.error_code ? <code>{e.error_code}</code> : '—'}</td>
              <td>{e.attempts}</td>
              <td>{`${e.duration_ms} ms`}</td>
              <td>{formatDate(e.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The execution log: find a call by request id, or filter the list of calls. */
export function ExecutionsPage() {
  const choices = useChoices();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const pages = useKeysetPages(
    async (next): Promise<KeysetPage<ExecutionSummary>> => {
      const page = await ok(api.GET('/v1/providers/executions', { params: { query: queryOf(filters, next) } }));
      return { items: page.executions, next: page.next_cursor };
    },
    [filters],
  );
  const { first: log, more } = pages;
  const packageNames = new Map((choices.data?.packages ?? []).map((p) => [p.id, p.name] as [string, string]));
  return (
    <>
      <PageTitle product={PRODUCT}>Executions</PageTitle>
      <p>Every call of your capabilities, as your runtime saw it, kept for 30 days.</p>
      <FindByRequestId />
      <Section
        title="Execution log"
        actions={
          <Button onClick={log.reload} busy={log.loading}>
            Refresh
          </Button>
        }
      >
        <FilterForm choices={choices.data} filters={filters} onApply={setFilters} />
        <Loaded resource={log}>
          {(first) => {
            const rows = [...first, ...more];
            if (rows.length === 0) return <EmptyState>No executions match. Calls appear here as users and widgets run them.</EmptyState>;
            return (
              <>
                <ExecutionTable rows={rows} packageNames={packageNames} />
                <LoadOlder pages={pages} what="executions" />
              </>
            );
          }}
        </Loaded>
      </Section>
    </>
  );
}

const PHASE_LABELS: Record<string, string> = {
  accept: 'Accept: authorise and validate the call',
  resolve: 'Resolve: credentials and execution context',
  invoke: 'Invoke: the runtime call, retries included',
  deliver: 'Deliver: check and hand back the answer',
};

/**
 * The phases as one bar, each a segment as wide as its share of the time (a
 * short phase keeps a sliver so it stays visible), and the same numbers as a
 * table for those who read rather than look.
 */
function PhaseTimeline(props: { phases: Phase[] }) {
  const total = props.phases.reduce((sum, p) => sum + p.duration_ms, 0);
  if (props.phases.length === 0) return <EmptyState>No phase was recorded.</EmptyState>;
  return (
    <figure class="timeline">
      <figcaption>{`Phases, ${round(total)} ms in all`}</figcaption>
      <div class="timeline-bar" aria-hidden="true">
        {props.phases.map((p) => (
          <div
            key={p.name}
            class={`timeline-segment phase-${p.name}`}
            style={{ flexGrow: Math.max(p.duration_ms, total / 100 || 1) }}
            title={`${p.name}: ${round(p.duration_ms)} ms`}
          >
            <span>{p.name}</span>
          </div>
        ))}
      </div>
      <table class="timeline-table">
        <caption class="visually-hidden">Phase timings</caption>
        <thead>
          <tr>
            <th scope="col">Phase</th>
            <th scope="col">Starts at</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {props.phases.map((p) => (
            <tr key={p.name}>
              <th scope="row">
                <span class={`timeline-key phase-${p.name}`} aria-hidden="true" /> {PHASE_LABELS[p.name] ?? p.name}
              </th>
              <td>{`${round(p.offset_ms)} ms`}</td>
              <td>{`${round(p.duration_ms)} ms`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

const round = (ms: number) => (ms >= 10 ? Math.round(ms) : Math.round(ms * 10) / 10);

/** One call: what ran, its phases drawn as a timeline, its attempts and the runtime's error. */
export function ExecutionPage(props: { requestId: string }) {
  const execution = useResource(
    () => ok(api.GET('/v1/providers/executions/{request_id}', { params: { path: { request_id: props.requestId } } })),
    [props.requestId],
  );
  return (
    <>
      <Breadcrumbs items={[{ href: '/executions', label: 'Executions' }]} />
      <Loaded resource={execution}>
        {(e) => (
          <>
            <PageTitle product={PRODUCT}>{`Call of ${e.capability}`}</PageTitle>
            {e.error && (
              <Notice kind="error">
                <strong>{e.error.code}</strong>: {e.error.message}
                {e.error.retries_exhausted ? ' (retries exhausted)' : ''}
              </Notice>
            )}
            <Section title="Summary">
              <Facts
                items={[
                  ['Request id', <code key="r">{e.request_id}</code>],
                  ['Outcome', <StateBadge key="o" state={e.outcome} />],
                  ['Capability', `${e.capability} (${e.mode})`],
                  ['Started by', e.trigger],
                  [
                    'Package',
                    <Link key="p" href={`/packages/${e.package_id}`}>
                      {e.package_id}
                    </Link>,
                  ],
                  ['Install', <code key="i">{e.install_id}</code>],
                  ['Attempts', `${e.attempts} (${e.retries} ${e.retries === 1 ? 'retry' : 'retries'})`],
                  ['Duration', `${e.duration_ms} ms`],
                  ['Started', formatDate(e.created_at)],
                ]}
              />
            </Section>
            <Section title="Timeline">
              <PhaseTimeline phases={e.phases} />
            </Section>
          </>
        )}
      </Loaded>
      {execution.error && (
        <p>
          <Link href="/executions">Back to the execution log</Link>
        </p>
      )}
    </>
  );
}
