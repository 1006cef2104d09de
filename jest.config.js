/**
 * Tests compile with the TypeScript compiler itself (ts-jest, transpile-only),
 * the same emitter as `nest build`, so decorator metadata (what Nest injection
 * and TypeORM depend on) is produced identically in tests and in production.
 * Type errors are caught once, by `npm run typecheck`.
 * @type {import('jest').Config}
 */
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] },
  // tmp/ holds generated files and StrykerJS's sandbox copies of the project, never tests to run.
  modulePathIgnorePatterns: ['<rootDir>/tmp/', '<rootDir>/packages/[^/]+/dist/'],
  // The toolkit's workspaces (packages/*) are tested from their sources, as the service's tests import them.
  moduleNameMapper: {
    '^@soul-service/([^/]+)$': '<rootDir>/packages/$1/src',
    '^@soul-service/([^/]+)/testing$': '<rootDir>/packages/$1/src/testing',
  },
};

module.exports = {
  projects: [
    {
      displayName: 'unit',
      ...common,
      testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
    },
    {
      // The provider toolkit's workspaces (issue 25): each package's own tests, no service needed.
      displayName: 'packages',
      ...common,
      testMatch: ['<rootDir>/packages/*/test/**/*.spec.ts'],
    },
    {
      displayName: 'e2e',
      ...common,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts', '<rootDir>/test/support/openapi-contract-setup.ts'],
      slowTestThreshold: 15,
    },
    {
      // Service-level tests (as immich's test/medium): an area's real Nest module and repositories on a
      // database cloned from the migrated template, driven by test/support/factories.ts; no HTTP.
      displayName: 'medium',
      ...common,
      testMatch: ['<rootDir>/test/medium/**/*.medium-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts'],
      slowTestThreshold: 10,
    },
    {
      // Property-based fuzz of every OpenAPI operation with real credentials (issue 22); seeded, FUZZ_SEED overrides.
      displayName: 'fuzz',
      ...common,
      testMatch: ['<rootDir>/test/fuzz/**/*.fuzz-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts'],
      slowTestThreshold: 240,
    },
    {
      // Web pages in headless Chromium against the built pages in dist/web (npm test builds first).
      displayName: 'browser',
      ...common,
      testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts'],
      slowTestThreshold: 30,
    },
  ],
};
