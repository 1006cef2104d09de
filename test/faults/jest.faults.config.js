/**
 * Fault and abuse tests (issue 10): `npm run test:faults`. Not part of `npm test`.
 * Same compilation and isolation as the e2e project in `jest.config.js`.
 * @type {import('jest').Config}
 */
module.exports = {
  rootDir: '../..',
  displayName: 'faults',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] },
  testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts'],
  slowTestThreshold: 30,
};
