// Lint: TypeScript rules plus the import rules that keep the layering of ARCHITECTURE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const noUiInCore = {
  patterns: [
    { group: ['electron', 'electron/*'], message: 'core/ never imports electron: keep it host-agnostic.' },
    { group: ['react', 'react-dom', 'react/*', 'react-dom/*'], message: 'core/ never imports react.' },
    { group: ['**/electron/**', '../electron', '../../electron'], message: 'core/ never imports electron/.' },
    { group: ['**/renderer/**', '../renderer', '../../renderer'], message: 'core/ never imports renderer/.' },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'dist-renderer/**', 'dist-electron/**', 'release/**', 'test-results/**', 'playwright-report/**', 'docs/**', 'tests/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', noUiInCore] },
  },
  {
    // Pure and seeded: no TF.js, no fs, no Math.random.
    files: ['core/envs/**/*.ts', 'core/prompts/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          ...noUiInCore.patterns,
          { group: ['@tensorflow/*'], message: 'core/envs and core/prompts are pure: no TF.js.' },
          { group: ['fs', 'node:fs', 'fs/*', 'node:fs/*'], message: 'core/envs and core/prompts are pure: no fs.' },
        ],
      }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Use the env-owned seeded RNG (core/envs/rng.ts).' }],
    },
  },
  {
    // Only core/model and core/train import TF.js.
    files: ['core/**/*.ts'],
    ignores: ['core/model/**', 'core/train/**', 'core/envs/**', 'core/prompts/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [...noUiInCore.patterns, { group: ['@tensorflow/*'], message: 'Only core/model and core/train import TF.js.' }],
      }],
    },
  },
  {
    // The renderer reaches the engine only through the API: type-only imports from core/api.
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/core/**', '!**/core/api', '!**/core/api/**'], message: 'renderer/ imports only from core/api.' },
          { group: ['**/core/api', '**/core/api/**'], allowTypeImports: true, message: 'renderer/ imports only types from core/api (use `import type`); data comes through the API client.' },
          { group: ['**/electron/**', 'electron'], message: 'renderer/ never imports electron: use the API client.' },
          { group: ['node:*', 'fs', 'path', 'child_process', '@tensorflow/*'], message: 'renderer/ runs in a browser: no Node modules, no TF.js.' },
        ],
      }],
    },
  },
);
