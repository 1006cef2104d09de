/**
 * Relationship score: every message to a contact adds 1 to an interaction
 * weight that decays exponentially with time constant τ (30 days):
 *
 *   on send:  weight = weight · e^(-(now - weight_at)/τ) + 1;  weight_at = now
 *   on read:  score  = 100 · (1 - e^(-weight_now / 5)),  weight_now = weight · e^(-(now - weight_at)/τ)
 *
 * so one message today gives 18.1, five give 63.2, and a month of silence
 * divides the weight by e. Both are SQL expressions so that ordering and
 * pagination by score happen in the database.
 *
 * PostgreSQL raises "value out of range: underflow" when `exp()` of a double
 * would round to zero, hence the exponents are capped at 700 (e^-700 ≈ 1e-304).
 */
export const DECAY_SECONDS = 30 * 86_400;
export const SCORE_SATURATION = 5;
const MAX_EXPONENT = 700;

/** The weight of `alias`'s row decayed to `at` (an SQL timestamptz expression). */
export function decayedWeightSql(alias: string, at = 'now()'): string {
  const elapsed = `GREATEST(extract(epoch FROM ${at})::float8 - extract(epoch FROM ${alias}.weight_at)::float8, 0)`;
  return `(CASE WHEN ${alias}.weight_at IS NULL THEN 0::float8 ELSE ${alias}.interaction_weight * exp(-LEAST(${elapsed} / ${DECAY_SECONDS}, ${MAX_EXPONENT})) END)`;
}

/** The 0–100 score of `alias`'s row now, rounded to one decimal. */
export function relationshipScoreSql(alias: string): string {
  return `round((100 * (1 - exp(-LEAST(${decayedWeightSql(alias)} / ${SCORE_SATURATION}, ${MAX_EXPONENT}))))::numeric, 1)::float8`;
}

/**
 * The SET list that records `count` interactions (an SQL number expression,
 * one by default) on `alias`'s row at `at` (an SQL timestamptz expression):
 * the decayed weight plus `count`, and the latest times.
 */
export function recordInteractionSetSql(alias: string, at: string, count = '1'): string {
  return `interaction_weight = ${decayedWeightSql(alias, at)} + ${count},
              weight_at = GREATEST(${alias}.weight_at, ${at}),
              last_interaction = GREATEST(${alias}.last_interaction, ${at})`;
}
