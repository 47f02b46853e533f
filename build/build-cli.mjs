#!/usr/bin/env node
// Builds the CLI (core/cli/main.ts) with esbuild into dist-cli/, so `spa-workbench` starts without
// compiling TypeScript at run time (bin/spa-workbench.mjs uses the build while it is current and
// falls back to the tsx loader otherwise). Runs at `npm ci`/`npm install` (the `prepare` script)
// and in the background when bin/ finds the build stale; never fails an install: on any error it
// says so and exits 0 (the CLI then runs from source).
//   dist-cli/main-<hash>.js      the entry (ESM) with the small npm packages bundled; TF.js and the like stay in node_modules
//   dist-cli/chunks/*.js         lazily loaded parts (content-hashed, shared between builds)
//   dist-cli/manifest.json       { entry, builtAt, inputs: { "core/...ts": [size, mtimeMs] } }, written last
// Usage: node build/build-cli.mjs [--quiet]
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { coreBanner, sourceUrlPlugin } from './core-bundle.mjs';
// (esbuild is imported in the try below: an install without dev packages must not fail on it)

/** Packages loaded from node_modules at run time (TF.js, native bindings, loaders, Hugging Face's transformers). */
const EXTERNAL = [
  '@tensorflow/*', '@huggingface/transformers', 'onnxruntime-node', 'onnxruntime-web', 'sharp', 'tsx', 'tsx/*', 'esbuild', 'electron',
  'bufferutil', 'utf-8-validate',
];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist-cli');
const lock = join(out, '.building');
const quiet = process.argv.includes('--quiet');
const say = (m) => { if (!quiet) console.log(m); };

/** One build at a time (several CLI processes may find the build stale at once); a lock older than 2 min is stale. */
function takeLock() {
  mkdirSync(out, { recursive: true });
  try { mkdirSync(lock); return true; } catch {
    try { if (Date.now() - statSync(lock).mtimeMs > 120_000) { rmSync(lock, { recursive: true, force: true }); mkdirSync(lock); return true; } } catch { /* raced */ }
    return false;
  }
}

/**
 * Files of earlier builds: removed once a day old (a long-running `serve` of an earlier build may
 * still load one of its lazy chunks; a day is longer than such a process lives between loads).
 */
function prune(keep) {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const dir of [out, join(out, 'chunks')]) {
    let names = [];
    try { names = readdirSync(dir); } catch { continue; }
    for (const n of names) {
      const f = join(dir, n);
      if (!/\.js(\.map)?$/.test(n) || keep.has(f) || keep.has(f.replace(/\.map$/, ''))) continue;
      try { if (statSync(f).mtimeMs < dayAgo) rmSync(f, { force: true }); } catch { /* raced */ }
    }
  }
}

try {
  if (!takeLock()) { say('build-cli: another build is under way'); process.exit(0); }
  try {
    const esbuild = await import('esbuild');
    const r = await esbuild.build({
      absWorkingDir: root,
      entryPoints: { main: 'core/cli/main.ts' },
      outdir: out,
      entryNames: '[name]-[hash]',
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,                   // dynamic import() stays lazy: a command loads only what it uses
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // the small pure-JS packages are bundled (no module resolution or CommonJS lexing at start); the large, native or
      // lazily loaded ones stay in node_modules
      external: EXTERNAL,
      banner: coreBanner,
      plugins: [sourceUrlPlugin(root)],
      metafile: true,
      logLevel: quiet ? 'silent' : 'warning',
    });
    const entry = Object.entries(r.metafile.outputs).find(([, o]) => o.entryPoint === 'core/cli/main.ts')?.[0];
    if (!entry) throw new Error('esbuild reported no output for core/cli/main.ts');
    // the sources the build read, with size and mtime: bin/ uses the build only while all are unchanged
    const inputs = {};
    // (the bundled npm packages are covered by package-lock.json: a new install changes it)
    for (const file of [...Object.keys(r.metafile.inputs).sort(), 'package-lock.json']) {
      if (file.includes('node_modules/')) continue;
      const s = statSync(join(root, file));
      inputs[file] = [s.size, s.mtimeMs];
    }
    writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
    const manifest = { entry: entry.slice('dist-cli/'.length), builtAt: Date.now(), inputs };
    const tmp = join(out, `.manifest-${process.pid}.json`);
    writeFileSync(tmp, `${JSON.stringify(manifest)}\n`);
    renameSync(tmp, join(out, 'manifest.json'));     // atomic: a CLI starting now reads the old or the new one
    prune(new Set(Object.keys(r.metafile.outputs).map((f) => join(root, f))));
    say(`build-cli: ${entry} from ${Object.keys(inputs).length} source files`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
} catch (err) {
  console.error(`build-cli: not built (${err instanceof Error ? err.message : String(err)}); the CLI runs from source (tsx)`);
}
