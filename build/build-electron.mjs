#!/usr/bin/env node
// Bundles the desktop shell with esbuild into dist-electron/:
//   main.js            electron/main.ts (ESM; lowdb 7 is ESM-only) + the core it hosts
//   engine-process.js  core/engine/engine-process.ts, the utilityProcess entry (ESM, with chunks
//                      for the lazily loaded stages)
//   preload.cjs        electron/preload.ts as ONE CommonJS file (a sandboxed preload cannot
//                      require anything but 'electron')
// npm packages stay external for main/engine (resolved from node_modules, unpacked from asar
// where native). Usage: node build/build-electron.mjs [--watch]
import * as esbuild from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist-electron');
const watch = process.argv.includes('--watch');
const ELECTRON_NODE_TARGET = 'node22';   // Electron 38 ships Node 22

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const banner = {
  // ESM output: give bundled CommonJS-style code a require() and __dirname where it expects one.
  js: "import { createRequire as __spaCreateRequire } from 'node:module'; const require = __spaCreateRequire(import.meta.url);",
};

const mainBuild = {
  absWorkingDir: root,
  entryPoints: { main: 'electron/main.ts', 'engine-process': 'core/engine/engine-process.ts' },
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
  logLevel: 'info',
};

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
