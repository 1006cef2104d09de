/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

// ESM-only packages deep in the dependency tree. Node 20.19 loads them with
// require(esm); Jest's own module loader does not, so they are compiled to CommonJS.
const esmOnly = ['content-disposition'];
const transformJs = ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } }];
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc, '^.+\\.m?js$': transformJs },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
};

module.exports = {
  projects: [
    {
      displayName: 'unit',
      ...common,
      testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
    },
    {
      displayName: 'e2e',
      ...common,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts'],
      slowTestThreshold: 15,
    },
  ],
};
