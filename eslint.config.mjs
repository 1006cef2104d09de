// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      '**/dist/',
      'tmp/',
      'node_modules/',
      'coverage/',
      'reports/',
      'bench/results/',
      'eslint.config.mjs',
      'jest.config.js',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    // The toolkit's workspaces: each package's tsconfig.json is its build (src only); the root one also holds their tests.
    files: ['packages/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // Areas never reach each other through forwardRef: a module cycle is broken instead (CONVENTIONS.md "Architecture";
    // the import graph is checked by .dependency-cruiser.cjs, `npm run lint:deps`, and SQL placement by `npm run lint:sql`).
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@nestjs/common',
              importNames: ['forwardRef'],
              message: 'No forwardRef: break the module cycle instead (CONVENTIONS.md).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      // Keep disableTypeChecked's parserOptions (projectService off): plain JS is not in tsconfig.
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' },
    },
  },
  {
    // `soul init` templates are CommonJS projects a provider runs with plain `node` (no build); a disable comment
    // naming a typescript-eslint rule in them would break a provider's own ESLint set-up.
    files: ['packages/cli/templates/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
