/**
 * The unit project alone, for StrykerJS (`npm run test:mutation`): mutants are
 * judged by the fast tests only, never by e2e tests that need a database per run.
 * @type {import('jest').Config}
 */
module.exports = {
  rootDir: '../..',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] },
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
};
