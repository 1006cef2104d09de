import { useId } from 'preact/hooks';
import { formatDate, Loading, Notice } from '../../shared/ui';
import { StateBadge } from '../components';
import { DIMENSIONS, type ConformanceRun } from '../types';

export function runInProgress(run: ConformanceRun | undefined): boolean {
  return run?.status === 'queued' || run?.status === 'running';
}

/** The six dimensions of a run with their scores and what each check found. */
export function ConformanceReport(props: { run: ConformanceRun }) {
  const { run } = props;
  const headingId = useId();
  const finished = !runInProgress(run) && run.status !== 'failed';
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId}>Conformance report</h2>
      <p class="hint">
        {run.full ? 'Full run: all six dimensions, against the runtime.' : 'Quick validation: schema, contracts and documentation only.'}{' '}
        Run <code>{run.id}</code>
        {run.completedAt ? `, finished ${formatDate(run.completedAt)}` : ''}.
      </p>
      {runInProgress(run) && <Loading label={`The conformance run is ${run.status}…`} />}
      {run.status === 'failed' && <Notice kind="error">The conformance run could not finish: {run.error ?? 'unknown error'}</Notice>}
      {finished && run.score !== null && (
        <p class="score">
          Score <strong>{run.score}/100</strong> <StateBadge state={run.passed ? 'passed' : 'failed'} />
          <span class="hint"> At least 80 and no dimension below 5 are needed to submit.</span>
        </p>
      )}
      {finished && run.dimensions && (
        <div class="dimensions">
          {DIMENSIONS.map(({ key, label }) => {
            const dimension = run.dimensions?.[key];
            if (!dimension) return null;
            // A quick run's contracts leave their live checks to the full run, which judges the floor.
            const low = dimension.ran && dimension.score < 5 && !dimension.checks.some((c) => c.deferred);
            return (
              <section key={key} class="dimension" aria-label={`${label} dimension`}>
                <h3>{label}</h3>
                {dimension.ran ? (
                  <>
                    <p class="dimension-score">
                      <strong>
                        {dimension.score} / {dimension.max}
                      </strong>{' '}
                      {low && <span class="badge badge-bad">below 5: blocks submission</span>}
                    </p>
                    <meter
                      min={0}
                      max={dimension.max}
                      low={5}
                      optimum={dimension.max}
                      value={dimension.score}
                      aria-label={`${label} score`}
                    >
                      {dimension.score} of {dimension.max}
                    </meter>
                  </>
                ) : (
                  <p class="hint">Not run by quick validation. Validate fully to score it.</p>
                )}
                {!run.full && key === 'contracts' && dimension.ran && (
                  <p class="hint">
                    Quick validation scores the static contract checks with the points they have in a full run; the live checks, marked
                    “full run”, are left out of this maximum and scored by a full run.
                  </p>
                )}
                {dimension.checks.length > 0 && (
                  <ul class="findings" aria-label={`${label} findings`}>
                    {dimension.checks.map((check) => (
                      <li key={check.id}>
                        <StateBadge state={checkState(check)} /> <code>{check.id}</code>{' '}
                        <span class="hint">
                          {check.points}/{check.max}
                        </span>
                        <div>{check.detail}</div>
                      </li>
                    ))}
                  </ul>
                )}
              </section>
            );
          })}
        </div>
      )}
    </section>
  );
}

/** A check's badge: a warning (worth no points) that did not pass is a warning, not a check that does not apply. */
function checkState(check: { deferred?: boolean; warning?: boolean; max: number; passed: boolean }): string {
  if (check.deferred) return 'full run';
  if (check.warning) return check.passed ? 'passed' : 'warning';
  if (check.max === 0) return 'not applicable';
  return check.passed ? 'passed' : 'failed';
}
