#!/usr/bin/env node
// Bundles bench/gpu-engine-run.ts with the engine (TF.js, transformers.js' tokenizers and every other package) into one
// ESM file that runs with node alone, for a GPU machine that has Python and torch but no node_modules. Native and unused
// optional packages (onnxruntime-node, sharp, tfjs-node) become empty stubs: the torch backend never loads them.
//   node bench/gpu-engine-bundle.mjs OUT_DIR      writes OUT_DIR/gpu-engine-run.mjs; put OUT_DIR inside the checkout (the
// engine finds resources/torch-worker/worker.py from its file upwards) or set SPA_TORCH_WORKER
import { copyFileSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = process.argv[2];
if (!outDir) { console.error('usage: node bench/gpu-engine-bundle.mjs OUT_DIR'); process.exit(2); }
mkdirSync(outDir, { recursive: true });
const STUBS = /^(onnxruntime-node|sharp|@tensorflow\/tfjs-node(-gpu)?|electron)(\/.*)?$/;
const stub = {
  name: 'stub-native',
  setup(b) {
    b.onResolve({ filter: STUBS }, (a) => ({ path: a.path, namespace: 'stub' }));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, (a) => ({
      // CommonJS, so that any named import resolves (to a function that says what was stubbed)
      contents: `module.exports = new Proxy({}, { get: (_, k) => k === '__esModule' ? false : () => { throw new Error('stubbed in the GPU bundle: ${a.path}'); } });`,
      loader: 'js',
    }));
  },
};
const file = join(outDir, 'gpu-engine-run.mjs');
await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['bench/gpu-engine-run.ts'],
  outfile: file,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  plugins: [stub],
  // CommonJS packages inside an ESM bundle need require, __dirname and __filename
  banner: { js: "import { createRequire as __cr } from 'node:module'; import { fileURLToPath as __fu } from 'node:url'; import { dirname as __dn } from 'node:path';" +
    ' const require = __cr(import.meta.url); const __filename = __fu(import.meta.url); const __dirname = __dn(__filename);' },
  logLevel: 'warning',
});
// TF.js' wasm backend loads its .wasm files from beside the bundle
const wasmDir = join(root, 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist');
for (const f of readdirSync(wasmDir).filter((n) => n.endsWith('.wasm'))) copyFileSync(join(wasmDir, f), join(outDir, f));
// transformers.js requires onnxruntime-node at run time through createRequire (not an import the bundler sees): the same
// stub as a package beside the bundle, where node's resolution finds it
for (const name of ['onnxruntime-node', 'sharp']) {
  mkdirSync(join(outDir, 'node_modules', name), { recursive: true });
  writeFileSync(join(outDir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '0.0.0-stub', main: 'index.js' }));
  writeFileSync(join(outDir, 'node_modules', name, 'index.js'),
    `module.exports = new Proxy({}, { get: (_, k) => k === '__esModule' ? false : () => { throw new Error('stubbed in the GPU bundle: ${name}'); } });\n`);
}
console.log(`${file}: ${(statSync(file).size / 1e6).toFixed(1)} MB`);
