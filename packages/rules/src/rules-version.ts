/**
 * The version of these rules, carried by every verdict (the service's
 * validation answers and conformance runs, the CLI's `validate`), so a client
 * can tell when its verdict and the server's came from different rules.
 *
 * Change it whenever a rule changes a verdict for some descriptor: a check
 * added, removed or reweighted, a detail reworded, a descriptor accepted or
 * refused differently, an error message changed. Refactorings that give every
 * descriptor the same verdict keep it. Form: `<year>.<month>.<n-th change that month>`.
 */
export const RULES_VERSION = '2026.11.1';
