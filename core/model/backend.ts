// Backend selection for TensorFlow.js: best first, reported, never a silent fallback.
//
//   tensorflow-gpu  @tensorflow/tfjs-node-gpu (CUDA 11.2 + cuDNN 8.1, native libtensorflow)
//   tensorflow      @tensorflow/tfjs-node     (native libtensorflow on CPU)
//   wasm            @tensorflow/tfjs-backend-wasm (XNNPACK, SIMD; always installable)
//   cpu             @tensorflow/tfjs-backend-cpu  (pure JS; slow, last resort)
//
// `auto` tries them in that order, except tensorflow-gpu (explicit only: CUDA 11.2 + cuDNN 8.1,
// no Ada/Hopper/Blackwell support, slower than tfjs-node in user reports), and records, for every better backend that did not load,
// why (e.g. "native binary not installed"). An explicit request (config `backend` or the
// SPA_BACKEND environment variable) that fails is an error, never a fallback.
import * as tf from '@tensorflow/tfjs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';

export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
export type BackendRequest = BackendName | 'auto';
export const BACKEND_ORDER: readonly BackendName[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];
/** What `auto` tries, best first: tensorflow-gpu is explicit only. */
export const AUTO_ORDER: readonly BackendName[] = ['tensorflow', 'wasm', 'cpu'];

export interface BackendAttempt { name: BackendName; ok: boolean; reason?: string }
export interface BackendReport {
  /** The backend that runs (our name). */
  backend: BackendName;
  /** TF.js's own name for it ('tensorflow' for both native ones, 'wasm', 'cpu'). */
  tfBackend: string;
  /** How it was chosen. */
  requested: BackendRequest;
  source: 'auto' | 'config' | 'env:SPA_BACKEND';
  /** Every backend tried, in order, with the reason each better one was not used. */
  attempts: BackendAttempt[];
  /** For wasm: whether SIMD / threads are on. */
  features: Record<string, boolean | number | string>;
  /** One line for logs and the UI. */
  summary: string;
}

const require = createRequire(import.meta.url);
let current: BackendReport | null = null;

/** tfjs-node(-gpu) 4.22 calls util.isNullOrUndefined, removed in Node >= 23. */
function polyfillNodeUtil(): void {
  const util = require('node:util') as Record<string, unknown>;
  if (typeof util.isNullOrUndefined !== 'function') {
    util.isNullOrUndefined = (v: unknown) => v === null || v === undefined;
  }
  if (typeof util.isArray !== 'function') util.isArray = Array.isArray;
}

function describeLoadError(pkg: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/Cannot find module '@tensorflow\/tfjs-node/.test(message) && message.includes(pkg)) {
    return `${pkg} is not installed (optional dependency); install it to use this backend`;
  }
  if (/tfjs_binding\.node|napi-v\d|\.node'|lib(tensorflow|tfjs)/i.test(message)) {
    return `${pkg} is installed but its native binary (libtensorflow / tfjs_binding.node) is missing or failed to load: ` +
      `${firstLine(message)}. Reinstall it with install scripts enabled (npm rebuild ${pkg})`;
  }
  if (/libcu|cudnn|CUDA/i.test(message)) {
    return `${pkg} could not load the CUDA libraries it needs (CUDA 11.2 + cuDNN 8.1): ${firstLine(message)}`;
  }
  return `${pkg} failed to load: ${firstLine(message)}`;
}
function firstLine(s: string): string { return s.split('\n')[0]!.slice(0, 300); }

function nativeBinaryPresent(pkg: string): string | null {
  try {
    const pkgJson = require.resolve(`${pkg}/package.json`);
    const root = dirname(pkgJson);
    const candidates = [join(root, 'lib'), join(root, 'deps', 'lib')];
    if (!candidates.some((p) => existsSync(p))) {
      return `${pkg} is installed without its native binary (no lib/ or deps/lib folder: its install script did not run); ` +
        `run \`npm rebuild ${pkg}\` with network access to download libtensorflow`;
    }
    return null;
  } catch {
    return `${pkg} is not installed (optional dependency)`;
  }
}

async function tryNative(name: 'tensorflow-gpu' | 'tensorflow'): Promise<string | null> {
  const pkg = name === 'tensorflow-gpu' ? '@tensorflow/tfjs-node-gpu' : '@tensorflow/tfjs-node';
  const missing = nativeBinaryPresent(pkg);
  if (missing) return missing;
  polyfillNodeUtil();
  try {
    require(pkg);
  } catch (error) {
    return describeLoadError(pkg, error);
  }
  try {
    const ok = await tf.setBackend('tensorflow');
    if (!ok) return `${pkg} loaded but TF.js could not initialise the 'tensorflow' backend`;
    await tf.ready();
    if (name === 'tensorflow-gpu') {
      // tfjs-node-gpu silently runs on CPU when CUDA is absent: check for a GPU device.
      const b = tf.backend() as unknown as { binding?: { TF_Version?: string }; isGPUPackage?: boolean; isUsingGpuDevice?: boolean };
      if (b.isUsingGpuDevice === false) return `${pkg} loaded but found no CUDA device (CUDA 11.2 + cuDNN 8.1 libraries not found?)`;
    }
    return null;
  } catch (error) {
    return describeLoadError(pkg, error);
  }
}

/**
 * On wasm, Identity (tf.clone, and every tensor a custom gradient saves for its backward pass)
 * copies the data; the cpu backend shares it (reference count), which is safe because tensors
 * are immutable. Make wasm share too: a training step saved ~100 MB of copies this way.
 */
function shareIdentityOnWasm(): void {
  const original = tf.getKernel('Identity', 'wasm');
  if (!original || (original.kernelFunc as { shared?: boolean }).shared) return;
  const kernelFunc = Object.assign((args: { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: unknown }) => {
    const x = args.inputs.x!;
    const backend = args.backend as { incRef?: (id: object) => void };
    if (x.dtype === 'string' || typeof backend.incRef !== 'function') return original.kernelFunc(args as Parameters<tf.KernelFunc>[0]);
    backend.incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  }, { shared: true });
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({ ...original, kernelFunc: kernelFunc as tf.KernelFunc });
}

async function tryWasm(): Promise<string | null> {
  try {
    await import('@tensorflow/tfjs-backend-wasm');
    const ok = await tf.setBackend('wasm');
    if (!ok) return 'the wasm backend failed to initialise (see the warning above)';
    await tf.ready();
    shareIdentityOnWasm();
    return null;
  } catch (error) {
    return `@tensorflow/tfjs-backend-wasm failed: ${firstLine(error instanceof Error ? error.message : String(error))}`;
  }
}

async function tryCpu(): Promise<string | null> {
  try {
    await import('@tensorflow/tfjs-backend-cpu');
    const ok = await tf.setBackend('cpu');
    if (!ok) return 'the cpu backend failed to initialise';
    await tf.ready();
    return null;
  } catch (error) {
    return `@tensorflow/tfjs-backend-cpu failed: ${firstLine(error instanceof Error ? error.message : String(error))}`;
  }
}

function tryBackend(name: BackendName): Promise<string | null> {
  switch (name) {
    case 'tensorflow-gpu': return tryNative('tensorflow-gpu');
    case 'tensorflow': return tryNative('tensorflow');
    case 'wasm': return tryWasm();
    case 'cpu': return tryCpu();
  }
}

export function parseBackendRequest(value: string, where: string): BackendRequest {
  const allowed: BackendRequest[] = ['auto', ...BACKEND_ORDER];
  if ((allowed as string[]).includes(value)) return value as BackendRequest;
  throw new Error(`${where}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
}

export interface InitBackendOptions {
  /** From the run config ('auto' by default). SPA_BACKEND overrides it when set. */
  backend?: BackendRequest;
  /** Log the summary line (default: no logging; the caller decides). */
  log?: (line: string) => void;
  /** Ignore SPA_BACKEND (tests, and core/train/runtime.ts, which reads it itself). */
  ignoreEnv?: boolean;
  /** The order `auto` tries (default AUTO_ORDER). */
  autoOrder?: readonly BackendName[];
}

/**
 * Choose and initialise the TF.js backend. Returns (and remembers) a report of which backend
 * runs and why each better one did not. Calling again with the same request is cheap.
 */
export async function initBackend(options: InitBackendOptions = {}): Promise<BackendReport> {
  let envValue = options.ignoreEnv ? undefined : process.env.SPA_BACKEND?.trim();
  if (envValue === 'torch') envValue = undefined;   // a run's backend (core/train/runtime.ts); TF.js-only commands use their auto order
  let requested: BackendRequest = options.backend ?? 'auto';
  let source: BackendReport['source'] = options.backend && options.backend !== 'auto' ? 'config' : 'auto';
  if (envValue) {
    requested = parseBackendRequest(envValue, 'environment variable SPA_BACKEND');
    source = requested === 'auto' ? 'auto' : 'env:SPA_BACKEND';
  }
  if (current && current.requested === requested && tf.getBackend() === current.tfBackend) return current;

  const attempts: BackendAttempt[] = [];
  let chosen: BackendName | null = null;
  if (requested !== 'auto') {
    const reason = await tryBackend(requested);
    attempts.push({ name: requested, ok: reason === null, ...(reason ? { reason } : {}) });
    if (reason) {
      throw new Error(`Backend '${requested}' was requested (${source === 'config' ? 'run config "backend"' : source}) but could not be loaded: ${reason}. ` +
        `Use "auto" to pick the best available backend, or fix the cause.`);
    }
    chosen = requested;
  } else {
    for (const name of options.autoOrder ?? AUTO_ORDER) {
      const reason = await tryBackend(name);
      attempts.push({ name, ok: reason === null, ...(reason ? { reason } : {}) });
      if (reason === null) { chosen = name; break; }
    }
    if (!chosen) throw new Error(`No TF.js backend could be loaded: ${attempts.map((a) => `${a.name}: ${a.reason}`).join('; ')}`);
  }

  const features: Record<string, boolean | number | string> = {};
  if (chosen === 'wasm') {
    try {
      features.simd = Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'));
      features.threads = Boolean(await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'));
    } catch { /* flags unknown in this build */ }
  }
  const skipped = attempts.filter((a) => !a.ok).map((a) => `${a.name}: ${a.reason}`);
  const summary = `TF.js backend: ${chosen}${Object.keys(features).length ? ` (${Object.entries(features).map(([k, v]) => `${k}=${v}`).join(', ')})` : ''}` +
    (skipped.length ? `; not used: ${skipped.join('; ')}` : '');
  current = { backend: chosen, tfBackend: tf.getBackend(), requested, source, attempts, features, summary };
  options.log?.(summary);
  return current;
}

