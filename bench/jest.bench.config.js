/**
 * Runs the benchmarks with the test harness (real PostgreSQL and Redis, a
 * database per bench cloned from a migrated template):
 *   npx jest --config bench/jest.bench.config.js bench/<name>.bench.ts
 * Each bench prints its table and writes bench/results/<name>.json (or into
 * BENCH_RESULTS_DIR); `npm run bench` (bench/run.js) runs them all and merges them.
 * @type {import('jest').Config}
 */
module.exports = {
  rootDir: '..',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] },
  testMatch: ['<rootDir>/bench/*.bench.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 600_000,
};
