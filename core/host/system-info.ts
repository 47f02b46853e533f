// Versions, compute backends and paths for system.info — found without loading TF.js (the host
// must stay light): a backend counts as available when its package resolves and, for the native
// ones, its compiled binding is on disk.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { BackendInfo } from '../api/contract.js';
import { autoWasmWorkers, torchBackendInfo } from '../engine/compute-info.js';
import * as os from 'node:os';

const require = createRequire(import.meta.url);
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function packageDir(name: string): string | null {
  try { return path.dirname(require.resolve(`${name}/package.json`)); } catch { /* no ./package.json export */ }
  const p = path.join(repoRoot, 'node_modules', ...name.split('/'));
  return fs.existsSync(path.join(p, 'package.json')) ? p : null;
}

function packageVersion(name: string): string | null {
  const dir = packageDir(name);
  if (!dir) return null;
  try { return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? null; } catch { return null; }
}

export function appVersion(): string {
  try { return (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version; } catch { return '0.0.0'; }
}

function findBinding(dir: string): string | null {
  const lib = path.join(dir, 'lib');
  if (!fs.existsSync(lib)) return null;
  for (const d of fs.readdirSync(lib)) {
    const f = path.join(lib, d, 'tfjs_binding.node');
    if (d.startsWith('napi-v') && fs.existsSync(f)) return f;
  }
  return null;
}

function nativeBackend(name: 'tensorflow-gpu' | 'tensorflow', pkg: string): BackendInfo {
  const dir = packageDir(pkg);
  if (!dir) return { name, available: false, detail: `${pkg} is not installed (optional dependency)` };
  const binding = findBinding(dir);
  if (!binding) return { name, available: false, detail: `${pkg} is installed but its native binding was not downloaded (run its install script ` +
    `with internet access; see README)` };
  return { name, available: true, detail: `${pkg} ${packageVersion(pkg) ?? ''} (${path.relative(repoRoot, binding)}); loads only if its ` +
    `libtensorflow${name === 'tensorflow-gpu' ? ' and CUDA 11.2 / cuDNN 8.1' : ''} can load` };
}

/** The backends in the order `auto` tries them (the first available one is auto's choice); tensorflow-gpu last (explicit only). */
export function detectBackends(): BackendInfo[] {
  const wasmDir = packageDir('@tensorflow/tfjs-backend-wasm');
  const wasmFile =
    wasmDir && ['dist/tfjs-backend-wasm-simd.wasm', 'dist/tfjs-backend-wasm.wasm'].map((f) => path.join(wasmDir, f)).find((f) => fs.existsSync(f));
  const gpu = nativeBackend('tensorflow-gpu', '@tensorflow/tfjs-node-gpu');
  return [
    torchBackendInfo(),
    nativeBackend('tensorflow', '@tensorflow/tfjs-node'),
    wasmFile
      ? { name: 'wasm', available: true, detail: `@tensorflow/tfjs-backend-wasm ${packageVersion('@tensorflow/tfjs-backend-wasm') ?? ''} ` +
        `(${path.basename(wasmFile)}); the main thread + data-parallel workers (auto: ${autoWasmWorkers()} on ${os.availableParallelism()} cores; ` +
        'config "workers" / SPA_WASM_WORKERS)' }
      : { name: 'wasm', available: false, detail: '@tensorflow/tfjs-backend-wasm or its .wasm files are missing' },
    { name: 'cpu', available: packageDir('@tensorflow/tfjs-backend-cpu') !== null, detail: 'pure JavaScript; always works, slowest' },
    { ...gpu, detail: `explicit only (backend "tensorflow-gpu"), never chosen by auto: CUDA 11.2 / cuDNN 8.1, no RTX 40xx/50xx; ` + gpu.detail },
  ];
}

/** Is the Electron binary installed (node_modules/electron/dist and require('electron') → a path)? */
export function electronBinary(): string | null {
  const dir = packageDir('electron');
  if (!dir || !fs.existsSync(path.join(dir, 'dist'))) return null;
  try {
    const p = require('electron') as unknown;
    return typeof p === 'string' && fs.existsSync(p) ? p : null;
  } catch { return null; }
}

export function versions(): Record<string, string> {
  const out: Record<string, string> = {
    app: appVersion(), node: process.versions.node, v8: process.versions.v8, platform: `${process.platform}-${process.arch}`,
  };
  if (process.versions.electron) out.electron = process.versions.electron;
  for (const [key, pkg] of [['tfjs', '@tensorflow/tfjs'], ['zod', 'zod'], ['lowdb', 'lowdb'], ['transformers', '@huggingface/transformers']] as const) {
    const v = packageVersion(pkg);
    if (v) out[key] = v;
  }
  return out;
}
