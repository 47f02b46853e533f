// Lint: TypeScript rules plus the import rules that keep the layering of ARCHITECTURE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));

// The layers of core/, VS Code style: each folder names the core/ folders it may import.
// An import of any other core/ folder fails lint (tests/lint/layers.test.ts plants one).
// Read bottom-up: util, api and model stand on nothing (every folder may also import util);
// hosts (cli, server) stand on everything.
export const CORE_LAYERS = {
  util: [],                                                  // pure helpers every folder may use: the one seeded RNG
  api: [],                                                   // the contract: methods, records, run config, errors, stage contract
  model: [],                                                 // the TF.js engine: tokenizers, decoder, training step, checkpoints
  envs: ['api'],                                             // pure, seeded environments
  storage: ['api'],                                          // the project folder
  prompts: ['api', 'envs'],                                  // templates, sessions, response parsing
  train: ['api', 'envs', 'prompts', 'model', 'storage'],     // stages, rollouts, RL math, episode statistics (Pass@k, collapse)
  eval: ['api', 'envs', 'prompts', 'model', 'storage', 'train'],
  engine: ['api', 'envs', 'storage', 'train', 'eval'],       // run host, study host, runner, stage registry
  interop: ['api', 'envs', 'prompts', 'storage'],           // SPA/RAGEN export bundles and run import (core/interop)
  host: ['api', 'envs', 'prompts', 'storage', 'engine', 'eval', 'interop'], // dispatcher, env adapter, rpc server, in-process client
  server: ['api', 'host'],                                   // HTTP + WebSocket host
  cli: ['api', 'envs', 'prompts', 'model', 'storage', 'train', 'eval', 'engine', 'host', 'server', 'interop'],
};
const TFJS_FOLDERS = new Set(['model', 'train']);
const PURE_FOLDERS = new Set(['util', 'envs', 'prompts']);

const EVERYONE = ['util'];   // folders every core/ folder may import

/** The core/ folder a resolved file path lies in, or null outside core/. */
function coreFolderOf(absPath) {
  const rel = relative(resolve(ROOT, 'core'), absPath);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep)[0];
}

/** Package specifiers a core/ folder may not import, by any import form: [regex, message]. */
function bannedPackages(folder, file) {
  const banned = [
    [/^electron(\/|$)/, 'core/ never imports electron: keep it host-agnostic.'],
    [/^react(-dom)?(\/|$)/, 'core/ never imports react.'],
  ];
  if (!TFJS_FOLDERS.has(folder)) banned.push([/^@tensorflow\//, 'Only core/model and core/train import TF.js.']);
  if (PURE_FOLDERS.has(folder) && !FS_READERS.has(file)) banned.push([/^(node:)?fs(\/|$)/, 'core/util, core/envs and core/prompts are pure: no fs.']);
  return banned;
}
/** The one file of core/util that may use fs: it opens user-named files (regular files only, bounded), for every layer. */
const FS_READERS = new Set([resolve(ROOT, 'core/util/regular-file.ts')]);

/**
 * The layer wall as one rule that resolves every import form (import, export ... from, import(), import type, typeof import(...),
 * import x = require()) against the importing file's own path, so it holds at any folder depth and for any spelling of the path
 * ('../train/x', '../../train/x', './../train/x'). tests/lint/layers.test.ts plants upward imports at depth 1 and 2.
 */
const layerImportsRule = {
  meta: { type: 'problem', schema: [], docs: { description: 'core/ folders import only the folders below them (CORE_LAYERS)' } },
  create(context) {
    const file = context.filename ?? context.getFilename();
    const folder = coreFolderOf(resolve(file));
    if (!folder || !CORE_LAYERS[folder]) return {};
    const allowed = new Set([folder, ...EVERYONE, ...CORE_LAYERS[folder]]);
    const banned = bannedPackages(folder, resolve(file));
    const check = (node, specifier) => {
      if (typeof specifier !== 'string') return;
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier);
        const rel = relative(ROOT, target).split(sep);
        if (rel[0] === 'electron' || rel[0] === 'renderer') {
          context.report({ node, message: `core/ never imports ${rel[0]}/.` });
          return;
        }
        const other = coreFolderOf(target);
        if (other && !allowed.has(other)) {
          context.report({ node, message: `core/${folder} may import only core/{${[...allowed].join(',')}} (CORE_LAYERS in eslint.config.js); core/${other} is not below it.` });
        }
        return;
      }
      for (const [pattern, message] of banned) if (pattern.test(specifier)) context.report({ node, message });
    };
    const fromSource = (node) => check(node, node.source?.value);
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source.value
        : node.source.type === 'TemplateLiteral' && node.source.expressions.length === 0 ? node.source.quasis[0].value.cooked : undefined),
      TSImportType: (node) => { const source = 'source' in node ? node.source : node.argument; check(node, source?.literal?.value ?? source?.value); },
      TSExternalModuleReference: (node) => check(node, node.expression?.value),
    };
  },
};

const coreLayersPlugin = { rules: { imports: layerImportsRule } };

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'dist-renderer/**', 'dist-electron/**', 'dist-cli/**', 'release/**', 'test-results/**', 'playwright-report/**', 'docs/**', 'tests/fixtures/**'] },
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
    // The layer wall (CORE_LAYERS) and the UI/TF.js/fs bans, for every import form at every depth.
    files: ['core/**/*.ts'],
    plugins: { 'core-layers': coreLayersPlugin },
    rules: { 'core-layers/imports': 'error' },
  },
  {
    // Pure and seeded: no Math.random.
    files: ['core/util/**/*.ts', 'core/envs/**/*.ts', 'core/prompts/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Use the seeded RNG (core/util/rng.ts).' }],
    },
  },
  {
    // core/api/wire.ts runs in the renderer and the sandboxed preload: type-only imports, no zod.
    files: ['core/api/wire.ts', 'core/api/verdict.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: ['*', '!./*.js'], message: 'core/api/wire.ts imports nothing at run time.' }, { group: ['./*.js'], allowTypeImports: true, message: 'core/api/wire.ts imports only types (it runs in the renderer and the preload, without zod).' }] }],
    },
  },
  {
    // The renderer reaches the engine only through the API: type-only imports from core/api (and the wire client).
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/core/**', '!**/core/api', '!**/core/api/**'], message: 'renderer/ imports only from core/api.' },
          { group: ['**/core/api/**', '!**/core/api/wire.js', '!**/core/api/verdict.js'], allowTypeImports: true, message: 'renderer/ imports only types from core/api (use `import type`), the zod-free wire client core/api/wire.ts and the verdict rule core/api/verdict.ts; data comes through the API client.' },
          { group: ['**/electron/**', '!**/electron/bridge.js', 'electron'], message: 'renderer/ never imports electron: use the API client.' },
          { group: ['**/electron/bridge.js'], allowTypeImports: true, message: 'renderer/ imports only the bridge type from electron/bridge.ts (use `import type`).' },
          { group: ['node:*', 'fs', 'path', 'child_process', '@tensorflow/*'], message: 'renderer/ runs in a browser: no Node modules, no TF.js.' },
        ],
      }],
    },
  },
);
