import { useState } from 'preact/hooks';
import { formValues, ok, type Schemas } from '../../shared/api';
import { Link, navigate, useLocation } from '../../shared/router';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useAction, useResource } from '../../shared/ui';
import { PRODUCT } from '../product';
import { api } from '../session';
import { humanise } from '../widgets';
import { Placement } from './home';

type Listing = Schemas['CatalogListingDto'];

type Install = Schemas['InstallDto'];

type InstallScope = NonNullable<Schemas['CreateInstallDto']['scopes']>[number];

type CapabilityType = Schemas['CatalogCapabilityDto']['type'];

const TIERS: Record<string, string> = {
  data_only: 'Reads data only',
  action_capable: 'Can act for you (always after your confirmation)',
  high_trust: 'High trust',
  strategic_surface: 'Strategic surface',
};

const MODES: Record<string, string> = {
  state: 'Shows current data',
  action: 'Does things for you after you confirm',
  history: 'Lists past activity',
  realtime: 'Streams live data',
  webhook: 'Sends you updates as they happen',
};

/** Scopes a user can grant at install (the service's INSTALL_SCOPES), with what each allows. */
const SCOPES: Array<{ scope: InstallScope; label: string; required: boolean }> = [
  {
    scope: 'capabilities:execute',
    label: 'Run its capabilities for you: fetch your data and, after you confirm each one, carry out actions',
    required: true,
  },
  { scope: 'installs:read', label: 'See that you installed it and which permissions you granted', required: false },
];

function useInstalls() {
  return useResource(() => ok(api.GET('/v1/installs')), []);
}

export function MarketplacePage() {
  const { query } = useLocation();
  const q = query.get('q') ?? '';
  const type = query.get('type') ?? '';
  const catalog = useResource(
    () =>
      ok(
        api.GET('/v1/marketplace/packages', {
          params: { query: { limit: 50, ...(q ? { q } : {}), ...(type ? { capability_type: type as CapabilityType } : {}) } },
        }),
      ),
    [q, type],
  );
  const installs = useInstalls();
  const installed = new Set((installs.data?.installs ?? []).map((i) => i.package_id));
  return (
    <>
      <PageTitle product={PRODUCT}>Marketplace</PageTitle>
      <form
        role="search"
        class="card search"
        onSubmit={(event) => {
          event.preventDefault();
          const values = formValues(event.currentTarget);
          const next = new URLSearchParams();
          if (values.q) next.set('q', values.q);
          if (values.type) next.set('type', values.type);
          const suffix = next.toString();
          navigate(`/marketplace${suffix ? `?${suffix}` : ''}`);
        }}
      >
        <Field label="Search packages" name="q" type="search" defaultValue={q} autoComplete="off" />
        <div class="field">
          <label for="capability-type">Capability type</label>
          {/* Preact has no defaultValue for <select>: the option carries the selection, so a deep link shows its filter. */}
          <select id="capability-type" name="type">
            <option value="" selected={!type}>
              Any
            </option>
            {Object.entries(MODES).map(([mode, label]) => (
              <option key={mode} value={mode} selected={mode === type}>
                {humanise(mode)}: {label.toLowerCase()}
              </option>
            ))}
          </select>
        </div>
        <Button type="submit" variant="primary">
          Search
        </Button>
      </form>
      <section aria-labelledby="results-heading">
        <h2 id="results-heading">{q ? `Results for “${q}”` : 'All packages'}</h2>
        <Loaded resource={catalog}>
          {(data) =>
            data.packages.length === 0 ? (
              <EmptyState>No packages match.</EmptyState>
            ) : (
              <ul class="package-list">
                {data.packages.map((pkg) => (
                  <li key={pkg.id} class="card">
                    <h3>
                      <Link href={`/marketplace/${encodeURIComponent(pkg.slug)}`}>{pkg.name}</Link>
                    </h3>
                    <p>{pkg.description}</p>
                    <p class="muted">
                      Version {pkg.version} · {TIERS[pkg.riskTier] ?? pkg.riskTier}
                      {installed.has(pkg.id) && (
                        <>
                          {' '}
                          · <span class="badge badge-good">Installed</span>
                        </>
                      )}
                    </p>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>
    </>
  );
}

export function PackagePage(props: { slug: string }) {
  const listing = useResource(
    () => ok(api.GET('/v1/marketplace/packages/{slug}', { params: { path: { slug: props.slug } } })),
    [props.slug],
  );
  const installs = useInstalls();
  return (
    <>
      <p>
        <Link href="/marketplace">Back to the marketplace</Link>
      </p>
      <Loaded resource={listing}>
        {(pkg) => (
          <>
            <PageTitle product={PRODUCT}>{pkg.name}</PageTitle>
            <p>{pkg.description}</p>
            <p class="muted">
              Version {pkg.version}, published {formatDate(pkg.publishedAt)} · {TIERS[pkg.riskTier] ?? pkg.riskTier}
            </p>
            <section class="card" aria-labelledby="capabilities-heading">
              <h2 id="capabilities-heading">What it can do</h2>
              <ul class="capabilities">
                {pkg.capabilities.map((c) => (
                  <li key={c.name}>
                    <strong>{humanise(c.name)}</strong> <span class="badge">{MODES[c.type] ?? c.type}</span>
                    <p>{c.description}</p>
                    {c.surfaceGuidance?.placement && c.surfaceGuidance.placement.length > 0 && (
                      <p class="muted">Appears in: {c.surfaceGuidance.placement.map(humanise).join(', ')}</p>
                    )}
                  </li>
                ))}
              </ul>
            </section>
            <Loaded resource={installs}>
              {(data) => (
                <InstallPanel pkg={pkg} install={data.installs.find((i) => i.package_id === pkg.id) ?? null} onChanged={installs.reload} />
              )}
            </Loaded>
          </>
        )}
      </Loaded>
    </>
  );
}

function InstallPanel(props: { pkg: Listing; install: Install | null; onChanged: () => void }) {
  const { pkg, install } = props;
  const [scopes, setScopes] = useState<InstallScope[]>(['capabilities:execute']);
  const [consent, setConsent] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const installAction = useAction(async () => {
    await ok(api.POST('/v1/installs', { body: { package_id: pkg.id, scopes } }));
    setDone(`${pkg.name} is installed. Its widgets appear on your home page.`);
    setConsent(false);
    props.onChanged();
  });
  const uninstall = useAction(async () => {
    if (!install) return;
    await ok(api.DELETE('/v1/installs/{install_id}', { params: { path: { install_id: install.id } } }));
    setConfirming(false);
    setDone(`${pkg.name} was uninstalled.`);
    props.onChanged();
  });
  if (install) {
    return (
      <section class="card" aria-labelledby="install-heading">
        <h2 id="install-heading">Installed</h2>
        {done && <Notice kind="success">{done}</Notice>}
        <p>
          Installed {formatDate(install.created_at)} (version {install.version}). Permissions granted: {install.scopes.join(', ')}.
        </p>
        <p>
          <Link href="/">See its widgets on your home page</Link>
        </p>
        <Placement
          placement="service_context"
          heading={`${pkg.name} for you`}
          empty={`${pkg.name} has nothing to show here.`}
          only={(model) => model.package.id === pkg.id}
        />
        <Button variant="danger" onClick={() => setConfirming(true)}>
          Uninstall
        </Button>
        <ConfirmDialog
          open={confirming}
          title={`Uninstall ${pkg.name}?`}
          confirmLabel="Uninstall"
          danger
          busy={uninstall.busy}
          error={uninstall.error}
          onConfirm={() => void uninstall.run()}
          onCancel={() => setConfirming(false)}
        >
          <p>{pkg.name} loses access at once and its widgets leave your home page. The provider is told to delete what it holds for you.</p>
        </ConfirmDialog>
      </section>
    );
  }
  return (
    <section class="card" aria-labelledby="install-heading">
      <h2 id="install-heading">Install</h2>
      {done && <Notice kind="success">{done}</Notice>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setDone(null);
          void installAction.run();
        }}
      >
        <fieldset>
          <legend>Permissions for {pkg.name}</legend>
          {SCOPES.map((s) => (
            <div class="check" key={s.scope}>
              <input
                type="checkbox"
                id={`scope-${s.scope}`}
                checked={scopes.includes(s.scope)}
                disabled={s.required}
                onChange={(e) =>
                  setScopes(e.currentTarget.checked ? [...scopes, s.scope] : scopes.filter((existing) => existing !== s.scope))
                }
              />
              <label for={`scope-${s.scope}`}>
                {s.label} {s.required && <span class="muted">(required)</span>}
              </label>
            </div>
          ))}
        </fieldset>
        <div class="check">
          <input type="checkbox" id="install-consent" required checked={consent} onChange={(e) => setConsent(e.currentTarget.checked)} />
          <label for="install-consent">I allow {pkg.name} these permissions. Actions always ask for my confirmation first.</label>
        </div>
        {installAction.error && <Notice kind="error">{installAction.error}</Notice>}
        <Button type="submit" variant="primary" busy={installAction.busy}>
          Install {pkg.name}
        </Button>
      </form>
    </section>
  );
}
