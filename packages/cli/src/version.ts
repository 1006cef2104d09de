/** The CLI's version, as in its package.json (test/cli.spec.ts keeps the two equal). */
export const VERSION = '0.1.0';
