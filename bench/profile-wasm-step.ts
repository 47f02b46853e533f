// Where one TF.js wasm training step (reference shape) spends its CPU: a V8 CPU profile (node:inspector)
// around --steps steps after one warm-up step, self time aggregated by function (wasm functions keep their
// XNNPACK names), plus CPU ms per step. Issue 34 item 4.
//   node bin/run-ts.mjs bench/profile-wasm-step.ts [--steps N (default 2)] [--top K (default 40)] [--out file.cpuprofile]
//   ... --ab --no-profile: alternate steps with the linear layers and attention on gemm-wasm.ts and on XNNPACK (tf.matMul), CPU ms of each
//   ... --ab-fma --no-profile: alternate gemm-wasm.ts with fused multiply-adds (relaxed SIMD) and with a multiply and an add
import * as tf from '@tensorflow/tfjs';
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { initBackend } from '../core/model/backend.js';
import { referenceStep } from './reference-step.js';
import { linearGemm } from '../core/model/kernels.js';
import { gemmOptions } from '../core/model/gemm-wasm.js';

const arg = (n: string) => { const i = process.argv.indexOf(n); return i >= 0 ? process.argv[i + 1] : undefined; };
const steps = Number(arg('--steps') ?? 2);
const top = Number(arg('--top') ?? 40);
const noProfile = process.argv.includes('--no-profile');
await initBackend({ backend: 'wasm', ignoreEnv: true });
const { model, trainer, batch } = referenceStep();
const first = trainer.step({ lossName: 'sft', batch });

const session = new Session();
session.connect();
const post = (method: string, params?: object) => new Promise<any>((res, rej) => session.post(method, params ?? {}, (e, r) => (e ? rej(e) : res(r))));
if (!noProfile) { await post('Profiler.enable'); await post('Profiler.setSamplingInterval', { interval: 500 }); await post('Profiler.start'); }
const cpu: number[] = [];
const abFma = process.argv.includes('--ab-fma');
const ab: Record<string, number[]> = {};
const mode = () => (abFma ? (gemmOptions.fma ? 'fma' : 'mul+add') : linearGemm.enabled ? 'gemm' : 'xnnpack');
let last = first;
for (let i = 0; i < steps; i++) {
  if (process.argv.includes('--ab')) linearGemm.enabled = i % 2 === 0;
  if (abFma) gemmOptions.fma = i % 2 === 0;
  const c0 = process.cpuUsage();
  last = trainer.step({ lossName: 'sft', batch });
  const c = process.cpuUsage(c0); cpu.push((c.user + c.system) / 1000);
  (ab[mode()] ??= []).push(cpu[cpu.length - 1]!);
  console.error(`step ${i} ${mode()} ${cpu[cpu.length - 1]!.toFixed(0)} ms CPU, loss ${last.loss}`);
}
const byFn = new Map<string, number>();
let total = 0;
if (!noProfile) {
  const { profile } = await post('Profiler.stop');
  const out = arg('--out');
  if (out) writeFileSync(out, JSON.stringify(profile));
  const dt = new Map<number, number>();
  (profile.samples as number[]).forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] as number)));
  for (const n of profile.nodes as Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>) {
    const us = dt.get(n.id) ?? 0;
    if (!us) continue;
    const f = n.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    total += us;
  }
}
console.log(JSON.stringify({
  cpuMsPerStep: cpu, ab, loss: [first.loss, last.loss], tensors: tf.memory().numTensors,
  selfShare: [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${(100 * v / total).toFixed(1)}% ${k}`),
}, null, 1));
trainer.dispose(); model.dispose();
