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
  // As the main config: the toolkit's packages are their sources, so a mutant in packages/rules/src is what the tests load
  // (without it they loaded the built dist/ and no mutant there was ever covered).
  moduleNameMapper: {
    '^@soul-service/([^/]+)$': '<rootDir>/packages/$1/src',
    '^@soul-service/([^/]+)/testing$': '<rootDir>/packages/$1/src/testing',
  },
};
