/**
 * The console's guidance (issue 24, "A console that guides"): every error of a refused descriptor, the
 * lifecycle of a version as a checklist with its next step, and the exact calls that get an app token and
 * execute a capability.
 */
import { useId, useRef, useState } from 'preact/hooks';
import { ApiFailure, ok, type Schemas } from '../shared/api';
import { Link } from '../shared/router';
import { Loaded, useResource } from '../shared/ui';
import { Section } from './components';
import { api } from './session';
import type { Package, Version } from './types';
import { callCommands, capabilitiesForCalls, lifecycleSteps, type StepState } from './guide-model';
import './guide.css';

type ConformanceRunDto = Schemas['ConformanceRunDto'];

/** One error of a refused create/version/validate: the problem's `errors` array (RFC 9457 extension). */
export interface DescriptorIssue {
  field: string;
  schemaPath?: string;
  message: string;
  code: string;
}

/** The `errors` list of a problem, or none (any other error, or a problem without the list). */
export function descriptorIssues(error: unknown): DescriptorIssue[] {
  if (!(error instanceof ApiFailure) || !error.body || typeof error.body !== 'object') return [];
  const list = (error.body as { errors?: unknown }).errors;
  if (!Array.isArray(list)) return [];
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return list
    .filter((item): item is Record<string, unknown> => !!item && typeof item === 'object')
    .map((item) => ({
      field: text(item.field) ?? '(root)',
      schemaPath: text(item.schema_path),
      message: text(item.message) ?? 'Invalid value',
      code: text(item.code) ?? 'invalid',
    }));
}

/**
 * Every error of the refusal, each with its field, beside the JSON editor it applies to. A labelled region, not
 * a heading (it sits in forms under the page's h1 and in sections under an h2) and not an alert (the problem
 * notice beside it announces the refusal once).
 */
export function DescriptorErrors(props: { error: unknown }) {
  const issues = descriptorIssues(props.error);
  const headingId = useId();
  if (issues.length === 0) return null;
  return (
    <section class="descriptor-errors notice notice-error" aria-labelledby={headingId}>
      <p id={headingId} class="descriptor-errors-title">
        <strong>{issues.length === 1 ? '1 error in the JSON' : `${issues.length} errors in the JSON`}: fix each and send again</strong>
      </p>
      <ol aria-label="Errors by field">
        {issues.map((issue, index) => (
          <li key={`${index}-${issue.field}`}>
            <code class="issue-field">{issue.field}</code> {issue.message} <span class="hint">({issue.code})</span>
            {issue.schemaPath && (
              <div class="hint">
                Schema path <code>{issue.schemaPath}</code>
              </div>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The version's runs, newest first (quick and full runs are both stored). */
export function loadRuns(versionId: string): Promise<ConformanceRunDto[]> {
  return ok(api.GET('/v1/providers/conformance', { params: { query: { version_id: versionId, limit: 50 } } })).then((r) => r.data);
}

const STEP_TEXT: Record<StepState, string> = {
  done: 'Done',
  current: 'Next step',
  failed: 'Next step, failed',
  running: 'Running',
  waiting: 'Waiting',
  todo: 'To do',
};

/** A visible checklist of the version's lifecycle, the current step marked (`aria-current="step"`). */
export function LifecycleChecklist(props: { packageId: string; version: Version; runs: ConformanceRunDto[]; linkToVersion?: boolean }) {
  const steps = lifecycleSteps(props.version, props.runs);
  const next = steps.find((s) => s.state !== 'done');
  return (
    <Section title={`Lifecycle of version ${props.version.version}`}>
      <p>
        {next ? (
          <>
            Next: <strong>{next.label}</strong>.{' '}
            {props.linkToVersion && <Link href={`/packages/${props.packageId}/versions/${props.version.id}`}>Go to the next step</Link>}
          </>
        ) : (
          'Every step is done.'
        )}
      </p>
      <ol class="lifecycle" aria-label="Lifecycle steps">
        {steps.map((step) => (
          <li key={step.label} class={`step step-${step.state}`} aria-current={step.state !== 'done' && step === next ? 'step' : undefined}>
            <span class="step-state">{STEP_TEXT[step.state]}</span> <strong>{step.label}</strong>
            {step.detail && <div class="hint">{step.detail}</div>}
          </li>
        ))}
      </ol>
    </Section>
  );
}

/** The lifecycle of the package's newest version, with its runs (the package page). */
export function PackageLifecycle(props: { pkg: Package }) {
  const version = props.pkg.versions?.[0];
  const runs = useResource(() => (version ? loadRuns(version.id) : Promise.resolve([])), [version?.id]);
  if (!version) return null;
  return (
    <Loaded resource={runs}>{(list) => <LifecycleChecklist packageId={props.pkg.id} version={version} runs={list} linkToVersion />}</Loaded>
  );
}

function CopyableCommand(props: { label: string; command: string }) {
  const [copied, setCopied] = useState('');
  const codeRef = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.command);
      setCopied(`${props.label}: copied to the clipboard.`);
    } catch {
      const selection = window.getSelection();
      if (selection && codeRef.current) selection.selectAllChildren(codeRef.current);
      setCopied(`${props.label}: selected, copy it with your keyboard or the context menu.`);
    }
  };
  return (
    <div class="command" role="group" aria-label={props.label}>
      <pre tabIndex={0}>
        <code ref={codeRef}>{props.command}</code>
      </pre>
      <button type="button" class="button button-secondary" onClick={() => void copy()}>
        Copy {props.label.toLowerCase()}
      </button>
      <p role="status" class="hint">
        {copied}
      </p>
    </div>
  );
}

/** "Call it": the exact curl commands for this package's app and a capability, with its example params. */
export function CallItPanel(props: { pkg: Package; version: Version }) {
  const app = useResource(
    () => ok(api.GET('/v1/providers/apps/{app_id}', { params: { path: { app_id: props.pkg.appId } } })),
    [props.pkg.appId],
  );
  const capabilities = capabilitiesForCalls(props.version.capabilities);
  const [chosen, setChosen] = useState(capabilities[0]?.name ?? '');
  const selectId = useId();
  const capability = capabilities.find((c) => c.name === chosen) ?? capabilities[0];
  return (
    <Section title="Call it">
      <Loaded resource={app}>
        {(a) => {
          if (!capability) return <p>This version has no capability the platform executes.</p>;
          const commands = callCommands({ origin: window.location.origin, clientId: a.client_id, packageId: props.pkg.id, capability });
          return (
            <>
              <p>
                1. Get an app token with the client credentials grant (<code>POST /v1/auth/token</code>, HTTP Basic with the app’s client id
                and secret; the secret was shown once when the app was created or rotated). The command reads <code>access_token</code> with{' '}
                <code>jq</code>.
              </p>
              <CopyableCommand label="Token command" command={commands.token} />
              <div class="field">
                <label for={selectId}>Capability</label>
                <select id={selectId} value={capability.name} onChange={(event) => setChosen(event.currentTarget.value)}>
                  {capabilities.map((c) => (
                    <option key={c.name} value={c.name}>
                      {c.name} ({c.type})
                    </option>
                  ))}
                </select>
              </div>
              <p>
                2. Execute <code>{capability.name}</code> for one user’s install with its example{' '}
                {capability.type === 'action' ? 'input (an action waits for the user’s confirmation: 202)' : 'params'}. Calls reach the
                published version’s runtime.
              </p>
              <CopyableCommand label="Execute command" command={commands.execute} />
            </>
          );
        }}
      </Loaded>
    </Section>
  );
}

/** Runtime health as the latest full conformance run judged it (performance, error handling and security call the runtime). */
export function RuntimeHealth(props: { pkg: Package }) {
  const versionId = props.pkg.publishedVersionId ?? props.pkg.versions?.[0]?.id;
  const runs = useResource(() => (versionId ? loadRuns(versionId) : Promise.resolve([])), [versionId]);
  if (!versionId) return <span>No version yet.</span>;
  return (
    <Loaded resource={runs}>
      {(list) => {
        const full = list.find((r) => r.full && r.status === 'completed');
        if (!full) return <span>Not probed yet: run a full validation to call the runtime.</span>;
        const live = ['performance', 'error_handling', 'security']
          .map((key) => full.dimensions?.[key])
          .filter((d): d is NonNullable<typeof d> => !!d && d.ran);
        const weak = live.some((d) => d.score < 5);
        return (
          <span>
            {weak ? 'Needs attention' : full.passed ? 'Healthy' : 'Failing checks'}: last full run scored {full.score ?? '?'}/100
            {full.completedAt ? ` on ${new Date(full.completedAt).toLocaleString()}` : ''}.
          </span>
        );
      }}
    </Loaded>
  );
}
