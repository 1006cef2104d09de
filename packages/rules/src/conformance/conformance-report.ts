/** Conformance report and scoring rules (spec: Validation result, Errors, Limits). */
export const DIMENSIONS = ['schema', 'contracts', 'documentation', 'performance', 'error_handling', 'security'] as const;
export type DimensionKey = (typeof DIMENSIONS)[number];

/** Maximum points per dimension; they sum to 100. */
export const DIMENSION_MAX: Record<DimensionKey, number> = {
  schema: 20,
  contracts: 25,
  documentation: 15,
  performance: 15,
  error_handling: 15,
  security: 10,
};
/** Local validation (`full: false`) runs only these; the spec names them. */
export const LOCAL_DIMENSIONS: readonly DimensionKey[] = ['schema', 'contracts', 'documentation'];
export const PASS_SCORE = 80;
export const DIMENSION_FLOOR = 5;

export interface CheckReport {
  id: string;
  passed: boolean;
  points: number;
  max: number;
  detail: string;
  /** A live check a quick validation leaves to the full run (see `CheckOutcome.deferred`). */
  deferred?: true;
  /** Advice worth no points (see `CheckOutcome.warning`): `passed` says whether it is followed. */
  warning?: true;
}

export interface DimensionReport {
  score: number;
  max: number;
  /** False when the dimension was not run (local validation); it then never counts as below the floor. */
  ran: boolean;
  checks: CheckReport[];
}

export interface ConformanceReport {
  /** Integer 0..100; in local mode normalised over the dimensions that ran. */
  score: number;
  passed: boolean;
  full: boolean;
  dimensions: Record<DimensionKey, DimensionReport>;
}

/**
 * What one check found before points are given: a weight inside its dimension
 * and the share (0..1) of what it looked at that conformed. A check that does not
 * apply to this package (no webhook capability, say) hands its weight to the
 * others in the dimension instead of giving free points.
 */
export interface CheckOutcome {
  id: string;
  weight: number;
  fraction: number;
  detail: string;
  applicable?: boolean;
  /**
   * A check the dimension cannot pass without (a credential leak, a runtime that
   * does not verify tokens): while it is not fully passed, the dimension scores
   * at most `DIMENSION_FLOOR - 1`, whatever the other checks earned.
   */
  blocking?: boolean;
  /**
   * A live check that a quick validation does not run: it keeps its share of
   * the dimension, so every other check has the same maximum as in a full run,
   * and the dimension's maximum leaves that share out instead of scoring it 0.
   */
  deferred?: boolean;
  /**
   * A warning: what a user will see that the provider probably did not mean
   * (a preferred component the example data does not fit, a widget that
   * cannot be polled). Reported with its detail, `passed` false while it
   * applies, but worth no points and never blocking: it neither lowers the
   * score nor the verdict. Its weight is ignored.
   */
  warning?: boolean;
}

export function deferred(id: string, weight: number, applicable: boolean): CheckOutcome {
  return applicable
    ? { id, weight, fraction: 0, detail: 'runs in a full run (validate?full=true), not in a quick validation', deferred: true }
    : notApplicable(id, weight, 'does not apply to these capabilities');
}

export function notApplicable(id: string, weight: number, why: string): CheckOutcome {
  return { id, weight, fraction: 0, detail: `not applicable: ${why}`, applicable: false };
}

const MAX_LISTED = 6;

/**
 * One check over many items (capabilities, properties, calls): the fraction is the
 * share that conformed and the detail names the ones that did not.
 */
export function checkOver(
  id: string,
  weight: number,
  items: Array<{ ok: boolean; why?: string }>,
  okDetail: string,
  emptyWhy: string,
): CheckOutcome {
  if (items.length === 0) return notApplicable(id, weight, emptyWhy);
  const failures = items.filter((i) => !i.ok).map((i) => i.why ?? 'failed');
  if (failures.length === 0) return { id, weight, fraction: 1, detail: okDetail };
  const listed = failures.slice(0, MAX_LISTED).join('; ');
  const more = failures.length > MAX_LISTED ? `; and ${failures.length - MAX_LISTED} more` : '';
  return { id, weight, fraction: (items.length - failures.length) / items.length, detail: `${listed}${more}` };
}

/**
 * Shares a dimension's maximum among its applicable checks by weight (largest
 * remainder, so the integer maxima add up exactly) and gives each check
 * `floor(fraction × max)` points: full points only for a check that fully passed.
 * A failed blocking check caps the dimension below the floor. Deferred checks
 * (a quick validation's placeholders for live ones) take their share out of
 * the dimension's maximum, so the same check has the same maximum in both kinds of run.
 */
export function scoreDimension(max: number, outcomes: CheckOutcome[]): DimensionReport {
  const applicable = outcomes.filter((o) => o.applicable !== false && o.warning !== true);
  const totalWeight = applicable.reduce((sum, o) => sum + o.weight, 0);
  const shares = new Map<CheckOutcome, number>();
  if (totalWeight > 0) {
    const exact = applicable.map((o) => ({ o, value: (max * o.weight) / totalWeight }));
    let left = max - exact.reduce((sum, e) => sum + Math.floor(e.value), 0);
    for (const e of exact) shares.set(e.o, Math.floor(e.value));
    for (const e of [...exact].sort((a, b) => b.value - Math.floor(b.value) - (a.value - Math.floor(a.value)))) {
      if (left <= 0) break;
      shares.set(e.o, (shares.get(e.o) ?? 0) + 1);
      left -= 1;
    }
  }
  const checks = outcomes.map((o): CheckReport => {
    if (o.applicable === false) return { id: o.id, passed: true, points: 0, max: 0, detail: o.detail };
    if (o.deferred === true) return { id: o.id, passed: true, points: 0, max: 0, detail: o.detail, deferred: true };
    if (o.warning === true) return { id: o.id, passed: o.fraction >= 1, points: 0, max: 0, detail: o.detail, warning: true };
    const checkMax = shares.get(o) ?? 0;
    const fraction = Math.min(1, Math.max(0, o.fraction));
    return { id: o.id, passed: fraction === 1, points: Math.floor(fraction * checkMax + 1e-9), max: checkMax, detail: o.detail };
  });
  // No applicable check at all cannot happen with the current check list (every dimension has one that
  // always applies); should it, the dimension is reported as not measurable rather than as a gift.
  const earned = checks.reduce((sum, c) => sum + c.points, 0);
  const blocked = applicable.some((o) => o.blocking === true && Math.min(1, Math.max(0, o.fraction)) < 1);
  const score = blocked ? Math.min(earned, DIMENSION_FLOOR - 1) : earned;
  const deferredShare = applicable.filter((o) => o.deferred === true).reduce((sum, o) => sum + (shares.get(o) ?? 0), 0);
  return { score, max: max - deferredShare, ran: true, checks };
}

export function notRun(key: DimensionKey): DimensionReport {
  return { score: 0, max: DIMENSION_MAX[key], ran: false, checks: [] };
}

/**
 * Aggregate and verdict: the sum over the dimensions that ran, normalised to 100
 * (rounded down) when not all ran; passed = aggregate ≥ 80 and no dimension that
 * ran below 5.
 */
export function finishReport(full: boolean, dimensions: Record<DimensionKey, DimensionReport>): ConformanceReport {
  const ran = DIMENSIONS.filter((k) => dimensions[k].ran);
  const got = ran.reduce((sum, k) => sum + dimensions[k].score, 0);
  const possible = ran.reduce((sum, k) => sum + dimensions[k].max, 0);
  const score = possible === 0 ? 0 : Math.floor((100 * got) / possible + 1e-9);
  const passed = score >= PASS_SCORE && ran.every((k) => !belowFloor(dimensions[k]));
  return { score, passed, full, dimensions };
}

/**
 * Whether a dimension that ran scored below the floor. A dimension that left
 * live checks to the full run (a quick validation's contracts) is judged by
 * the full run: its smaller maximum may itself be under the floor.
 */
function belowFloor(dimension: DimensionReport): boolean {
  return dimension.ran && dimension.score < DIMENSION_FLOOR && !dimension.checks.some((c) => c.deferred === true);
}

/** Dimensions that ran and scored below the floor. */
export function dimensionsBelowFloor(report: ConformanceReport): DimensionKey[] {
  return DIMENSIONS.filter((k) => belowFloor(report.dimensions[k]));
}

/**
 * The error a submission gets for this report, or null when it may be submitted:
 * a local report never qualifies (submission needs all six dimensions), an
 * aggregate below 80 is `conformance_failed`, otherwise a dimension below 5 is
 * `dimension_below_threshold`.
 */
export function submissionFault(report: ConformanceReport): 'conformance_failed' | 'dimension_below_threshold' | null {
  if (!report.full || report.score < PASS_SCORE) return 'conformance_failed';
  if (dimensionsBelowFloor(report).length > 0) return 'dimension_below_threshold';
  return null;
}
