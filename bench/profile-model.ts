// Where one training step's time goes (TF.js, reference shape): per kernel kind (count, ms) via
// tf.profile, phases (forward / backward / clip / optimizer) by wall and CPU time.
//   node bin/run-ts.mjs bench/profile-model.ts [--steps N] [--backend wasm]
import * as tf from '@tensorflow/tfjs';
import os from 'node:os';
import { initBackend } from '../core/model/backend.js';
import { referenceStep } from './reference-step.js';
import { generate } from '../core/model/generate.js';

const arg = (n: string) => { const i = process.argv.indexOf(n); return i >= 0 ? process.argv[i + 1] : undefined; };
const steps = Number(arg('--steps') ?? 3);
await initBackend({ backend: 'wasm', ignoreEnv: true });
const { model, trainer, inputIds, batch } = referenceStep();
trainer.step({ lossName: 'sft', batch });

const median = (xs: number[]) => { const a = [...xs].sort((x, y) => x - y); return a[Math.floor(a.length / 2)]!; };
function timed<T>(f: () => T): [T, number, number] {
  const c0 = process.cpuUsage(); const t0 = performance.now(); const r = f(); const c = process.cpuUsage(c0);
  return [r, performance.now() - t0, (c.user + c.system) / 1000];
}
const phases: Record<string, { wall: number[]; cpu: number[] }> = {};
const rec = (k: string, w: number, c: number) => { (phases[k] ??= { wall: [], cpu: [] }).wall.push(w); phases[k]!.cpu.push(c); };
const vars = model.trainableVariables();
for (let i = 0; i < steps; i++) {
  const [, w, c] = timed(() => trainer.step({ lossName: 'sft', batch })); rec('step', w, c);
  const [, fw, fc] = timed(() => tf.tidy(() => { model.tokenOutputs(inputIds).logprobs.dataSync(); })); rec('forward', fw, fc);
  const [, bw, bc] = timed(() => tf.tidy(() => {
    const { grads } = tf.variableGrads(() => tf.neg(tf.mean(model.tokenOutputs(inputIds).logprobs)) as tf.Scalar, vars);
    Object.values(grads)[0]!.dataSync();
  })); rec('forward+backward', bw, bc);
}
const prof = await tf.profile(() => { trainer.step({ lossName: 'sft', batch }); });
const byKernel = new Map<string, { n: number; ms: number }>();
let kernelMs = 0;
for (const k of prof.kernels) {
  const e = byKernel.get(k.name) ?? { n: 0, ms: 0 };
  e.n++; e.ms += k.kernelTimeMs as number; kernelMs += k.kernelTimeMs as number;
  byKernel.set(k.name, e);
}
// matmul shapes
const mm = new Map<string, { n: number; ms: number }>();
for (const k of prof.kernels) if (k.name === 'BatchMatMul' || k.name === '_FusedMatMul') {
  const key = k.inputShapes.map((sh) => `[${sh}]`).join('x');
  const e = mm.get(key) ?? { n: 0, ms: 0 }; e.n++; e.ms += k.kernelTimeMs as number; mm.set(key, e);
}
const genTok = { encode: () => [], decode: (ids: number[]) => ids.join(','), eosTokenId: -1, padTokenId: 0 };
const prompts = inputIds.map((r) => r.slice(0, 16));
generate(model, genTok, prompts, { maxNewTokens: 8, seed: 1, stopTokenIds: [] });
const [, gw, gc] = timed(() => generate(model, genTok, prompts, { maxNewTokens: 240, seed: 1, stopTokenIds: [] }));
console.log(JSON.stringify({
  loadAverage: os.loadavg(),
  phasesMedianMs: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, { wall: median(v.wall), cpu: median(v.cpu) }])),
  profiledStep: { kernels: prof.kernels.length, kernelMs, newTensors: prof.newTensors, peakBytes: prof.peakBytes },
  byKernel: [...byKernel.entries()].sort((a, b) => b[1].ms - a[1].ms).map(([k, v]) => `${k}: n=${v.n} ${v.ms.toFixed(1)}ms`),
  matmuls: [...mm.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25).map(([k, v]) => `${k}: n=${v.n} ${v.ms.toFixed(1)}ms`),
  generate: { wallMs: gw, cpuMs: gc, tokPerCpuS: 16 * 240 / (gc / 1000) },
}, null, 1));
trainer.dispose(); model.dispose();
