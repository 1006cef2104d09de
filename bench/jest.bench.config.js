/**
 * Runs the gateway benchmark with the test harness (real PostgreSQL, Redis,
 * two api instances and a worker in one process):
 *   npx jest --config bench/jest.bench.config.js [bench/gateway.bench.ts]
 * Results are printed and written to bench/results/gateway.json.
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
