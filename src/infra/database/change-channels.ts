/**
 * PostgreSQL notification channels whose triggers announce changes to what
 * an api instance remembers (`NotifiedCache`). The session cache and the app
 * token standings name theirs beside their caches; this one is written by
 * three areas' repositories (installs, packages, developers and apps), so it
 * lives here where all of them may import it.
 */

/** Changes to what the runtime bridge reads to call a runtime for an install; the payload is the package id. */
export const INSTALL_TARGETS_CHANNEL = 'install_targets_changed';
