// Type-aware lint over the files tsconfig.json covers: rules that catch bugs (promises
// nobody awaits, a switch that misses a case), not style. `npm run lint` / hack/lint.sh.
// Why typescript-eslint comes from hack/lint/: docs/decisions.md ("Lint").
import { defineConfig } from 'eslint/config';
import tseslint from './hack/lint/index.js';

/** The rules, the same for the api's side and the studio's. */
const checks = {
  plugins: { '@typescript-eslint': tseslint.plugin },
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
    // Promise.all over a builder that returns a value or a promise (progress-relay's marks) is fine.
    '@typescript-eslint/await-thenable': ['error', { allowMixedPromiseArrays: true }],
    '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
    '@typescript-eslint/no-explicit-any': 'error',
    'no-control-regex': 'error',
  },
};

export default defineConfig(
  // hack/api-client/journey.ts imports a file generated while its test runs; that test type-checks it (hack/api-client/tsconfig.json).
  { ignores: ['**/node_modules/**', '.data/**', '**/*.js', 'hack/api-client/**'] },
  {
    files: ['{api,operator,job-images,recognizer,test,bench,hack,crds}/**/*.ts', 'studio/build.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    ...checks,
  },
  // The studio runs in a browser: its own tsconfig (DOM types, Preact's JSX), the same rules.
  {
    files: ['studio/src/**/*.{ts,tsx}'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './studio/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    ...checks,
  },
);
