import { ApiFailure, describeError } from '../shared/api';

/**
 * Problem details (RFC 9457) of the provider platform: the stable code is the
 * fragment of `type` (`…/developers/errors#mfa_required`); some problems add
 * `field`, `schema_path` and, for the conformance gate, `score` and `dimension`.
 */
export interface Problem {
  code: string;
  title: string;
  detail: string;
  status: number;
  field?: string;
  schemaPath?: string;
  score?: number;
  dimension?: string;
  currentState?: string;
  conformanceId?: string;
}

export function problemOf(error: unknown): Problem | null {
  if (!(error instanceof ApiFailure)) return null;
  const body = (error.body && typeof error.body === 'object' ? error.body : {}) as Record<string, unknown>;
  const type = typeof body.type === 'string' ? body.type : '';
  const code = type.includes('#') ? type.slice(type.indexOf('#') + 1) : error.code;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    code,
    title: text(body.title) ?? error.code,
    detail: error.message,
    status: error.status,
    field: text(body.field),
    schemaPath: text(body.schema_path),
    score: typeof body.score === 'number' ? body.score : undefined,
    dimension: text(body.dimension),
    currentState: text(body.current_state),
    conformanceId: text(body.conformance_id),
  };
}

export function problemCode(error: unknown): string | null {
  return problemOf(error)?.code ?? null;
}

/** The API's refusal as an alert: title, detail and where in the request or descriptor it applies. */
export function ProblemNotice(props: { error: unknown; label?: string }) {
  if (!props.error) return null;
  const problem = problemOf(props.error);
  if (!problem) {
    return (
      <div class="notice notice-error" role="alert">
        {describeError(props.error)}
      </div>
    );
  }
  return (
    <div class="notice notice-error problem" role="alert">
      <p class="problem-title">
        <strong>{problem.title}</strong> <code>{problem.code}</code>
      </p>
      <p>{problem.detail}</p>
      {(problem.field || problem.schemaPath || problem.score !== undefined || problem.dimension) && (
        <dl class="problem-extras">
          {problem.field && (
            <>
              <dt>Field</dt>
              <dd>
                <code>{problem.field}</code>
              </dd>
            </>
          )}
          {problem.schemaPath && (
            <>
              <dt>Schema path</dt>
              <dd>
                <code>{problem.schemaPath}</code>
              </dd>
            </>
          )}
          {problem.score !== undefined && (
            <>
              <dt>Score</dt>
              <dd>{problem.score}/100</dd>
            </>
          )}
          {problem.dimension && (
            <>
              <dt>Dimension</dt>
              <dd>{problem.dimension}</dd>
            </>
          )}
        </dl>
      )}
    </div>
  );
}
