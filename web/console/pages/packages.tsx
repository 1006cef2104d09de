import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ok, type Schemas } from '../../shared/api';
import { Link, navigate, useLocation } from '../../shared/router';
import { Button, EmptyState, formatDate, Loaded, Notice, PageTitle, useResource, useAction } from '../../shared/ui';
import { Breadcrumbs, Facts, ListPage, Section, StateBadge } from '../components';
import { usePoll } from '../poll';
import { problemOf, ProblemNotice } from '../problem';
import { PRODUCT } from '../product';
import { api } from '../session';
import { RISK_TIERS, type Package, type Version } from '../types';
import { loadApps } from './apps';
import { ConformanceReport, runInProgress } from './conformance-report';
import { CallItPanel, DescriptorErrors, descriptorIssues, LifecycleChecklist, loadRuns, PackageLifecycle, RuntimeHealth } from '../guide';
import { DescriptorEditor, useDescriptorDocument } from '../capability-editor/editor';
import { parseDocument, withoutRuntimeUrl, type FieldIssue } from '../capability-editor/model';
import { installCountOf, listingHref } from '../guide-model';

export function PackagesPage() {
  const packages = useResource(() => ok(api.GET('/v1/providers/packages')).then((r) => r.packages), []);
  return (
    <ListPage
      title="Packages"
      create={{ href: '/packages/new', label: 'Create a package' }}
      resource={packages}
      empty="No packages yet. A package describes your capabilities and the runtime that serves them."
      caption="Your packages"
      columns={['Name', 'Slug', 'Risk tier', 'Catalog']}
      cells={(p) => (
        <>
          <td>
            <Link href={`/packages/${p.id}`}>{p.name}</Link>
          </td>
          <td>
            <code>{p.slug}</code>
          </td>
          <td>{p.riskTier.replace(/_/g, ' ')}</td>
          <td>
            <StateBadge state={p.status === 'suspended' ? 'suspended' : p.publishedVersionId ? 'published' : 'not published'} />
          </td>
        </>
      )}
    />
  );
}

const DESCRIPTOR_TEMPLATE = {
  name: 'Acme Bank',
  slug: 'acme-bank',
  description: 'Balances and transfers of Acme Bank accounts.',
  riskTier: 'data_only',
  runtimeUrl: 'https://runtime.example.com',
  version: '1.0.0',
  capabilities: [
    {
      type: 'state',
      name: 'balance',
      description: 'Current balance of one account.',
      refreshInterval: 300,
      schema: {
        type: 'object',
        properties: { account: { type: 'string', description: 'Which account.', default: 'checking' } },
        required: ['account'],
      },
      surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['stat_row'] },
      examples: [{ params: { account: 'checking' }, response: { available: 1520.75, currency: 'EUR' } }],
    },
  ],
};

/** Every error of a refusal for the form's fields: the problem's `errors`, or its one `field` when it has no list. */
function fieldIssues(error: unknown): FieldIssue[] {
  const listed = descriptorIssues(error);
  if (listed.length > 0) return listed;
  const problem = problemOf(error);
  return problem?.field ? [{ field: problem.field, message: problem.detail }] : [];
}

/** Where a problem points in a descriptor, as text for the field's error. */
function descriptorError(error: unknown): string | undefined {
  const problem = problemOf(error);
  if (!problem || problem.status !== 400) return undefined;
  const where = [problem.field && `field ${problem.field}`, problem.schemaPath && `schema path ${problem.schemaPath}`]
    .filter(Boolean)
    .join(', ');
  return where ? `${problem.detail} (${where})` : problem.detail;
}

export function NewPackagePage() {
  const apps = useResource(loadApps, []);
  const [appId, setAppId] = useState('');
  const [jsonError, setJsonError] = useState<string | null>(null);
  const document = useDescriptorDocument(DESCRIPTOR_TEMPLATE);
  const create = useAction(async (app: string, descriptor: Record<string, unknown>) => {
    // The developer's own JSON, sent as written: the API validates it and its problem points at the field.
    const created = await ok(api.POST('/v1/providers/packages', { body: { ...descriptor, appId: app } as Schemas['CreatePackageDto'] }));
    navigate(`/packages/${created.id}`);
  });
  return (
    <>
      <Breadcrumbs items={[{ href: '/packages', label: 'Packages' }]} />
      <PageTitle product={PRODUCT}>Create a package</PageTitle>
      <Loaded resource={apps}>
        {(list) =>
          list.length === 0 ? (
            <EmptyState>
              A package belongs to an app. <Link href="/apps/new">Register an app</Link> first.
            </EmptyState>
          ) : (
            // Not a <form>: the editor holds many fields (Enter in one of them must not send the package), and the
            // preview draws /app's action form, which may not sit inside another form.
            <div class="card">
              <div class="field">
                <label for="package-app">App</label>
                <select id="package-app" value={appId || list[0].id} onChange={(event) => setAppId(event.currentTarget.value)}>
                  {list.map((app) => (
                    <option key={app.id} value={app.id}>
                      {app.name} ({app.id})
                    </option>
                  ))}
                </select>
              </div>
              <DescriptorEditor
                kind="package"
                document={document}
                issues={fieldIssues(create.failure)}
                failure={create.failure}
                jsonLabel="Package descriptor (JSON)"
                jsonName="descriptor"
                jsonHint={`name, slug, description, riskTier (${RISK_TIERS.join(', ')}), runtimeUrl (HTTPS), version and capabilities, full or short form. JSON Schema draft-07 or 2020-12. The form beside follows this text.`}
                jsonError={jsonError ?? descriptorError(create.failure)}
              />
              {jsonError && <Notice kind="error">{jsonError}</Notice>}
              <ProblemNotice error={create.failure} />
              <Button
                variant="primary"
                busy={create.busy}
                onClick={() => {
                  const parsed = parseDocument(document.text);
                  if (parsed.error !== undefined) {
                    setJsonError(`The descriptor is not valid JSON: ${parsed.error}`);
                    create.setError(null);
                    return;
                  }
                  setJsonError(null);
                  void create.run(appId || list[0].id, parsed.value);
                }}
              >
                Create package
              </Button>
            </div>
          )
        }
      </Loaded>
    </>
  );
}

function loadPackage(packageId: string): Promise<Package> {
  return ok(api.GET('/v1/providers/packages/{package_id}', { params: { path: { package_id: packageId } } }));
}

export function PackageDetailPage(props: { packageId: string }) {
  const pkg = useResource(() => loadPackage(props.packageId), [props.packageId]);
  return (
    <>
      <Breadcrumbs items={[{ href: '/packages', label: 'Packages' }]} />
      <Loaded resource={pkg}>
        {(p) => {
          const published = p.versions?.find((v) => v.id === p.publishedVersionId);
          return (
            <>
              <PageTitle
                product={PRODUCT}
                actions={
                  <Link href={`/packages/${p.id}/versions/new`} class="button button-secondary">
                    New version
                  </Link>
                }
              >
                {p.name}
              </PageTitle>
              {p.status === 'suspended' && (
                <Notice kind="error">
                  This package is suspended{typeof p.suspension?.reason === 'string' ? ` (${p.suspension.reason})` : ''}.{' '}
                  {typeof p.suspension?.remediation === 'string' ? p.suspension.remediation : 'Contact support to request reinstatement.'}
                </Notice>
              )}
              <Section title="Package">
                <Facts
                  items={[
                    [
                      'Catalog',
                      published ? (
                        <span key="catalog">
                          Published: version {published.version}. <a href={listingHref(p.slug)}>Open the listing in the app</a>
                        </span>
                      ) : (
                        'Not published'
                      ),
                    ],
                    ['Installs', installCountOf(p) ?? 'Not known'],
                    ['Runtime health', <RuntimeHealth key="health" pkg={p} />],
                    ['Package id', <code key="id">{p.id}</code>],
                    ['Slug', <code key="slug">{p.slug}</code>],
                    [
                      'App',
                      <Link key="app" href={`/apps/${p.appId}`}>
                        {p.appId}
                      </Link>,
                    ],
                    ['Risk tier', p.riskTier.replace(/_/g, ' ')],
                    [
                      'Live runtime URL',
                      <span key="rt" class="break">
                        {p.runtimeUrl}
                      </span>,
                    ],
                    ['Description', p.description],
                    ['Status', <StateBadge key="st" state={p.status} />],
                  ]}
                />
              </Section>
              <PackageLifecycle pkg={p} />
              <Section title="Versions">
                <div class="table-wrap">
                  <table>
                    <caption class="visually-hidden">Versions, newest first</caption>
                    <thead>
                      <tr>
                        <th scope="col">Version</th>
                        <th scope="col">State</th>
                        <th scope="col">Created</th>
                        <th scope="col">Submitted</th>
                        <th scope="col">Published</th>
                      </tr>
                    </thead>
                    <tbody>
                      {(p.versions ?? []).map((v) => (
                        <tr key={v.id}>
                          <td>
                            <Link href={`/packages/${p.id}/versions/${v.id}`}>{`Version ${v.version}`}</Link>
                          </td>
                          <td>
                            <StateBadge state={v.state} />
                          </td>
                          <td>{formatDate(v.createdAt)}</td>
                          <td>{formatDate(v.submittedAt)}</td>
                          <td>{formatDate(v.publishedAt)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </Section>
            </>
          );
        }}
      </Loaded>
    </>
  );
}

function nextPatch(version: string | undefined): string {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version ?? '');
  return match ? `${match[1]}.${match[2]}.${Number(match[3]) + 1}` : '1.0.0';
}

export function NewVersionPage(props: { packageId: string }) {
  const pkg = useResource(() => loadPackage(props.packageId), [props.packageId]);
  return <Loaded resource={pkg}>{(p) => <NewVersionForm key={p.id} pkg={p} />}</Loaded>;
}

function NewVersionForm(props: { pkg: Package }) {
  const p = props.pkg;
  const latest = p.versions?.[0];
  const [jsonError, setJsonError] = useState<string | null>(null);
  // The latest version's capabilities to start from, without the runtime each was stored with: the version's own
  // runtime (or, left empty, the latest one) applies to all of them.
  const document = useDescriptorDocument({
    version: nextPatch(latest?.version),
    capabilities: withoutRuntimeUrl(latest?.capabilities ?? [], latest?.runtimeUrl ?? undefined),
  });
  const create = useAction(async (body: Record<string, unknown>) => {
    const version = await ok(
      api.POST('/v1/providers/packages/{package_id}/versions', {
        params: { path: { package_id: p.id } },
        // The developer's own JSON, sent as written: the API validates it.
        body: body as Schemas['CreateVersionDto'],
      }),
    );
    navigate(`/packages/${p.id}/versions/${version.id}`);
  });
  return (
    <>
      <Breadcrumbs
        items={[
          { href: '/packages', label: 'Packages' },
          { href: `/packages/${p.id}`, label: p.name },
        ]}
      />
      <PageTitle product={PRODUCT}>{`New version of ${p.name}`}</PageTitle>
      <div class="card">
        <DescriptorEditor
          kind="version"
          document={document}
          issues={fieldIssues(create.failure)}
          failure={create.failure}
          packageName={p.name}
          jsonLabel="New version (JSON)"
          jsonName="version-body"
          jsonHint="version, capabilities and optionally runtimeUrl. The form beside follows this text."
          jsonError={jsonError ?? descriptorError(create.failure)}
          versionHint={`Three dot-separated numbers, greater than ${latest?.version ?? 'the latest'}.`}
          runtimeHint={`Leave empty to keep ${latest?.runtimeUrl ?? p.runtimeUrl}. Users' traffic moves to this version's runtime only when it is published.`}
        />
        {jsonError && <Notice kind="error">{jsonError}</Notice>}
        <ProblemNotice error={create.failure} />
        <Button
          variant="primary"
          busy={create.busy}
          onClick={() => {
            const parsed = parseDocument(document.text);
            if (parsed.error !== undefined) {
              setJsonError(`The version is not valid JSON: ${parsed.error}`);
              create.setError(null);
              return;
            }
            setJsonError(null);
            void create.run(parsed.value);
          }}
        >
          Create version
        </Button>
      </div>
    </>
  );
}

type Release = 'quick' | 'full' | 'submit' | 'publish';

/** The run named in the address, or else the version's latest run, so a report is there when the page is opened afresh. */
function useVersionRun(packageId: string, versionId: string) {
  const { query } = useLocation();
  const runId = query.get('run');
  const run = useResource(
    () =>
      runId
        ? ok(api.GET('/v1/providers/conformance/{conf_id}', { params: { path: { conf_id: runId } } }))
        : ok(api.GET('/v1/providers/conformance', { params: { query: { version_id: versionId, limit: 1 } } })).then(
            (list) => list.data[0] ?? null,
          ),
    [runId, versionId],
  );
  usePoll(run.reload, runInProgress(run.data ?? undefined), 1000);
  const showRun = (id: string) => navigate(`/packages/${packageId}/versions/${versionId}?run=${encodeURIComponent(id)}`, { replace: true });
  return { runId, run, showRun };
}

/** Validate, submit and publish: one at a time, each leaving a line of outcome and showing the run it started or judged. */
function useRelease(packageId: string, versionId: string, onChanged: () => void) {
  const { runId, run, showRun } = useVersionRun(packageId, versionId);
  const [outcome, setOutcome] = useState<ComponentChildren | null>(null);
  const path = { package_id: packageId, version_id: versionId };
  const action = useAction(async (kind: Release) => {
    setOutcome(null);
    if (kind === 'quick' || kind === 'full') {
      const result = await ok(
        api.POST('/v1/providers/packages/{package_id}/versions/{version_id}/validate', {
          params: { path, query: kind === 'full' ? { full: 'true' } : {} },
        }),
      );
      setOutcome(
        kind === 'full' ? 'Full validation requested: the report below follows the run until it finishes.' : 'Quick validation finished.',
      );
      if (result.id === runId) run.reload();
      else showRun(result.id);
      return;
    }
    if (kind === 'submit') {
      let result: Schemas['SubmissionDto'];
      try {
        result = await ok(api.POST('/v1/providers/packages/manage/{package_id}/versions/{version_id}/submit', { params: { path } }));
      } catch (error) {
        // The gate's refusal names the run it judged: show that report beside the problem.
        const failedRun = problemOf(error)?.conformanceId;
        if (failedRun && failedRun !== runId) showRun(failedRun);
        throw error;
      }
      setOutcome(
        result.review === 'manual'
          ? 'Submitted. The version is in the review queue; you can publish it once it is approved.'
          : 'Submitted and listed automatically: you can publish it now.',
      );
      onChanged();
      if (result.conformance?.id) showRun(result.conformance.id);
      return;
    }
    const result = await ok(api.POST('/v1/providers/packages/manage/{package_id}/versions/{version_id}/publish', { params: { path } }));
    // The listing as users see it in the app, not the catalog's JSON (which needs a token a browser does not send).
    setOutcome(
      <>
        Published version {result.version.version} to the catalog. <a href={listingHref(result.slug)}>Open the listing in the app</a>
      </>,
    );
    onChanged();
  });
  return { run, action, outcome };
}

function VersionFacts(props: { version: Version }) {
  const { version } = props;
  return (
    <Section title="Version">
      <Facts
        items={[
          ['State', <StateBadge key="state" state={version.state} />],
          ['Version id', <code key="id">{version.id}</code>],
          [
            'Runtime URL',
            <span key="rt" class="break">
              {version.runtimeUrl}
            </span>,
          ],
          ['Created', formatDate(version.createdAt)],
          ['Submitted', formatDate(version.submittedAt)],
          ['Published', formatDate(version.publishedAt)],
          ...(version.reviewReason ? [['Returned by review', version.reviewReason] as [string, string]] : []),
        ]}
      />
      <details>
        <summary>Capabilities ({version.capabilities.length})</summary>
        <pre>{JSON.stringify(version.capabilities, null, 2)}</pre>
      </details>
    </Section>
  );
}

function ReleaseSection(props: { version: Version; action: ReturnType<typeof useRelease>['action']; outcome: ComponentChildren | null }) {
  const { version, action, outcome } = props;
  const canSubmit = version.state === 'draft';
  const canPublish = version.state === 'approved';
  return (
    <Section title="Validate and release">
      <p>
        Quick validation checks schema, contracts and documentation. A full run also calls the runtime for performance, error handling and
        security; submitting needs a score of at least 80 with no dimension below 5.
      </p>
      <div class="actions">
        <Button onClick={() => void action.run('quick')} busy={action.busy}>
          Validate (quick)
        </Button>
        <Button onClick={() => void action.run('full')} busy={action.busy}>
          Validate fully
        </Button>
        <Button
          variant="primary"
          onClick={() => void action.run('submit')}
          busy={action.busy}
          disabled={!canSubmit || action.busy}
          aria-describedby="submit-hint"
        >
          Submit for review
        </Button>
        <Button
          variant="primary"
          onClick={() => void action.run('publish')}
          busy={action.busy}
          disabled={!canPublish || action.busy}
          aria-describedby="publish-hint"
        >
          Publish
        </Button>
      </div>
      <ul class="hint">
        <li id="submit-hint">
          {canSubmit
            ? 'Submit runs all six dimensions (or reuses a fresh full run).'
            : `Submit: only draft versions; this one is ${version.state.replace(/_/g, ' ')}.`}
        </li>
        <li id="publish-hint">
          {canPublish
            ? 'Approved: publishing lists it in the catalog.'
            : version.state === 'published'
              ? 'This version is published.'
              : 'Publish: available once the version is approved.'}
        </li>
      </ul>
      {outcome && <Notice kind="success">{outcome}</Notice>}
      <ProblemNotice error={action.failure} />
      <DescriptorErrors error={action.failure} />
    </Section>
  );
}

export function VersionPage(props: { packageId: string; versionId: string }) {
  const { packageId, versionId } = props;
  const pkg = useResource(() => loadPackage(packageId), [packageId]);
  const { run, action, outcome } = useRelease(packageId, versionId, pkg.reload);
  return (
    <Loaded resource={pkg}>
      {(p) => {
        const version = p.versions?.find((v) => v.id === versionId);
        if (!version) return <Notice kind="error">This version does not exist.</Notice>;
        return (
          <>
            <Breadcrumbs
              items={[
                { href: '/packages', label: 'Packages' },
                { href: `/packages/${p.id}`, label: p.name },
              ]}
            />
            <PageTitle product={PRODUCT}>{`${p.name} ${version.version}`}</PageTitle>
            <VersionFacts version={version} />
            <VersionLifecycle packageId={p.id} version={version} run={run.data ?? null} />
            <ReleaseSection version={version} action={action} outcome={outcome} />
            <Loaded resource={run}>{(data) => (data ? <ConformanceReport run={data} /> : null)}</Loaded>
            <CallItPanel pkg={p} version={version} />
          </>
        );
      }}
    </Loaded>
  );
}

/** The checklist of the version's lifecycle, read again whenever the shown run or the version's state moves. */
function VersionLifecycle(props: { packageId: string; version: Version; run: { id: string; status?: string } | null }) {
  const { version, run } = props;
  const runs = useResource(() => loadRuns(version.id), [version.id, version.state, run?.id, run?.status]);
  return <Loaded resource={runs}>{(list) => <LifecycleChecklist packageId={props.packageId} version={version} runs={list} />}</Loaded>;
}
