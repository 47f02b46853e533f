#!/usr/bin/env node
// Bundles the desktop shell with esbuild into dist-electron/:
//   main.js            electron/main.ts (ESM; lowdb 7 is ESM-only) + the core it hosts
//   engine-process.js  core/engine/engine-process.ts, the utilityProcess entry (ESM, with chunks
//                      for the lazily loaded stages)
//   render-worker.js   core/host/render-worker.ts, the worker thread of envs.render / templates.preview
//   import-worker.js   core/host/import-worker.ts, the worker thread of runs.import
//   dp-worker.js       core/train/dp-worker-entry.ts, a data-parallel worker thread of the wasm backend
//   template-perplexity.js  core/cli/perplexity-entry.ts, the templates.perplexity utilityProcess
//                      (so the packaged app needs neither bin/ nor ELECTRON_RUN_AS_NODE)
//   preload.cjs        electron/preload.ts as ONE CommonJS file (a sandboxed preload cannot
//                      require anything but 'electron')
// npm packages stay external for main/engine (resolved from node_modules, unpacked from asar
// where native). Usage: node build/build-electron.mjs [--watch]
import * as esbuild from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { coreBanner, sourceUrlPlugin } from './core-bundle.mjs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist-electron');
const watch = process.argv.includes('--watch');
const ELECTRON_NODE_TARGET = 'node22';   // Electron 38 ships Node 22

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const banner = coreBanner;
const sourceUrl = sourceUrlPlugin(root);

const mainBuild = {
  absWorkingDir: root,
  entryPoints: {
    main: 'electron/main.ts', 'engine-process': 'core/engine/engine-process.ts', 'render-worker': 'core/host/render-worker.ts',
    'import-worker': 'core/host/import-worker.ts',
    'template-perplexity': 'core/cli/perplexity-entry.ts', probe: 'core/cli/probe-entry.ts', 'dp-worker': 'core/train/dp-worker-entry.ts',
  },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: ELECTRON_NODE_TARGET,
  packages: 'external',
  external: ['electron'],
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: true,
  banner,
  plugins: [sourceUrl],
  logLevel: 'info',
};

/**
 * The contract's method names, computed from core/api/contract.ts at build time and inlined into
 * the preload (so the sandboxed preload does not carry zod: a few KB instead of ~470 KB).
 */
async function contractMethodNames() {
  const r = await esbuild.build({
    absWorkingDir: root, entryPoints: ['core/api/contract.ts'], bundle: true, format: 'esm', platform: 'node',
    target: 'node20', write: false, packages: 'external', logLevel: 'silent',
  });
  const tmp = join(out, `.contract-${process.pid}.mjs`);
  writeFileSync(tmp, r.outputFiles[0].text);
  try {
    const mod = await import(pathToFileURL(tmp).href);
    const names = mod.apiMethodNames();
    if (!Array.isArray(names) || names.length === 0) throw new Error('apiMethodNames() returned nothing');
    return names;
  } finally {
    rmSync(tmp, { force: true });
  }
}

const preloadBuild = {
  absWorkingDir: root,
  entryPoints: ['electron/preload.ts'],
  outfile: join(out, 'preload.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: ELECTRON_NODE_TARGET,
  external: ['electron'],
  minify: true,
  sourcemap: true,
  logLevel: 'info',
  define: { __SPA_API_METHODS__: JSON.stringify(await contractMethodNames()) },
};

try {
  if (watch) {
    const contexts = await Promise.all([esbuild.context(mainBuild), esbuild.context(preloadBuild)]);
    await Promise.all(contexts.map((c) => c.watch()));
    console.log('watching electron/ and core/ …');
  } else {
    await Promise.all([esbuild.build(mainBuild), esbuild.build(preloadBuild)]);
    // dist-electron/*.js are ESM (the root package.json says "type": "module"); say it locally too
    // so the folder stays correct when copied on its own.
    writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }, null, 2) + '\n');
    console.log(`built ${out}: main.js, engine-process.js, preload.cjs`);
  }
} catch (err) {
  console.error(`build-electron failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
