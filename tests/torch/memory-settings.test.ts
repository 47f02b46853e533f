// model.memory on the torch backend (core/model/memory.ts, docs/checkpoints.md): the token budget per micro-batch goes
// from the run config through useBackend to the worker and changes the number of forward chunks, not the step; checkpoints
// hold what the rule says (a resume point: f32 weights + AdamW moments; otherwise weights in the checkpoint dtype, no
// moments), with the sizes that follow from the parameter count, and a resume continues exactly; frozen models keep bf16
// weights; the RL stage keeps its milestones bounded and leaves no moments behind a finished stage.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { useBackend } from '../../core/train/runtime.js';
import { memorySettings, resolvedMemory, setMemorySettings } from '../../core/model/memory.js';
import { TfjsRuntime, type ModelRuntime, type TrainRow } from '../../core/model/runtime.js';
import { loadCheckpoint } from '../../core/model/checkpoint.js';
import { TorchRuntime } from '../../core/model/torch/runtime.js';
import { probeTorch, type TorchProbe } from '../../core/model/torch/worker-client.js';
import { PARITY_FIXTURES, maxDiff, torchFrom } from './helpers.js';
import { runPreset } from '../train/helpers.js';
import '../../core/train/losses.js';

const DIR = path.join(PARITY_FIXTURES, 'qwen2-f32');
let probe: TorchProbe;
const open: ModelRuntime[] = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-torch-memory-'));

beforeAll(async () => {
  await tf.setBackend('cpu');
  probe = probeTorch();
  if (!probe.ok) throw new Error(`these tests need a Python with torch: ${probe.reason}`);
});
// every test gives its models' workers back to the pool (core/model/torch/worker-client.ts, two idle): the next model
// reuses a Python that has torch imported (a start is ~1.5 CPU-s; this file started 13 of them when models stayed open)
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.dispose();
  setMemorySettings(undefined);
});
afterAll(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

/** Gives a model's worker back now (the next model() takes it), keeping it out of afterEach's list. */
async function release(rt: ModelRuntime): Promise<void> {
  open.splice(open.indexOf(rt), 1);
  await rt.dispose();
}

async function model(opts: { trainable?: boolean; resume?: boolean; dir?: string } = {}): Promise<TorchRuntime> {
  const rt = await torchFrom(probe, opts.dir ?? DIR, { resume: opts.resume });
  open.push(rt);
  return rt;
}

/** Four SFT rows of different lengths, loss on their second half. */
function rows(rt: ModelRuntime): TrainRow[] {
  return ['the box is there', 'the answer</answer> (P X) is here now', '<|im_start|>the is', 'a b c d e f g h i j k'].map((t) => {
    const ids = rt.tokenizer.encode(t);
    return { ids, arrays: { lossMask: ids.map((_, i) => (i >= ids.length / 2 ? 1 : 0)) } };
  });
}

/** The ops a runtime sends to its worker, recorded. */
function recordOps(rt: TorchRuntime): string[] {
  const w = rt.workerForTests;
  const ops: string[] = [];
  const send = w.request.bind(w);
  w.request = ((op: string, ...rest: Parameters<typeof send> extends [string, ...infer R] ? R : never) => { ops.push(op); return send(op, ...rest); }) as typeof w.request;
  return ops;
}

/** A safetensors file: element count by dtype and the data bytes after the header. */
function safetensorsLayout(file: string): { dtypes: Set<string>; elements: number; dataBytes: number } {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, { dtype: string; shape: number[] }>;
  const tensors = Object.entries(header).filter(([k]) => k !== '__metadata__').map(([, v]) => v);
  return {
    dtypes: new Set(tensors.map((t) => t.dtype)),
    elements: tensors.reduce((a, t) => a + t.shape.reduce((x, y) => x * y, 1), 0),
    dataBytes: buf.length - 8 - n,
  };
}

/** f32 -> the nearest bf16 (round to nearest even), back as f32. */
function bf16(x: Float32Array): Float32Array {
  const u = new Uint32Array(x.buffer.slice(x.byteOffset, x.byteOffset + x.byteLength));
  for (let i = 0; i < u.length; i++) u[i] = ((u[i]! + 0x7fff + ((u[i]! >>> 16) & 1)) >>> 16) << 16;
  return new Float32Array(u.buffer);
}

const manifestOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
  weights: { dtype: string }; optimizerStep: number | null;
};

describe('model.memory.tokensPerMicroBatch', () => {
  it('reaches the worker from the run config: more forward chunks, the same loss and the same update', async () => {
    await useBackend(RunConfigSchema.parse({ backend: 'torch', model: { memory: { tokensPerMicroBatch: 12 } } }));
    expect(memorySettings().tokensPerMicroBatch).toBe(12);
    const small = await model();
    const smallOps = recordOps(small);
    const a = await small.trainStep('sft', rows(small), {}, 1e-2, 1);
    const smallForwards = smallOps.filter((o) => o === 'forward').length;
    const smallApplies = smallOps.filter((o) => o === 'apply').length;
    const wa = await small.weights();
    await release(small);

    await useBackend(RunConfigSchema.parse({ backend: 'torch' }));
    expect(memorySettings().tokensPerMicroBatch).toBe(6144);
    const big = await model();
    const bigOps = recordOps(big);
    const b = await big.trainStep('sft', rows(big), {}, 1e-2, 1);
    const bigForwards = bigOps.filter((o) => o === 'forward').length;
    const wb = await big.weights();
    await release(big);

    expect(bigForwards).toBe(1);
    expect(smallForwards).toBeGreaterThanOrEqual(3);          // every row is longer than half the budget: one row a chunk
    expect(smallApplies).toBe(1);                             // gradients accumulate: one optimizer step
    expect(Math.abs(a['losses/total']! - b['losses/total']!)).toBeLessThan(1e-5);
    expect(Math.abs(a['charts/gradNorm']! - b['charts/gradNorm']!)).toBeLessThan(1e-4);
    // the same AdamW step (its size is lr = 1e-2 per weight) up to float summation order
    const w0 = await (await model()).weights();
    expect(maxDiff(wa.get('lm_head.weight')!, w0.get('lm_head.weight')!)).toBeGreaterThan(5e-3);
    for (const [name, w] of wa) expect(maxDiff(w, wb.get(name)!), name).toBeLessThan(1e-4);
  }, 120_000);

  it('a bad value is refused naming the field', () => {
    expect(() => RunConfigSchema.parse({ model: { memory: { tokensPerMicroBatch: 0 } } })).toThrow(/tokensPerMicroBatch/);
    expect(() => RunConfigSchema.parse({ model: { memory: { tokenBudget: 10 } } })).toThrow(/tokenBudget/);
    expect(() => setMemorySettings({ generationRows: 1.5 })).toThrow(/model\.memory\.generationRows/);
    expect(() => setMemorySettings({ keepMilestones: -1 })).toThrow(/model\.memory\.keepMilestones/);
    expect(() => setMemorySettings({ resumePointMinutes: -1 })).toThrow(/model\.memory\.resumePointMinutes/);
    expect(() => RunConfigSchema.parse({ model: { memory: { resumePointMinutes: -5 } } })).toThrow(/resumePointMinutes/);
  });
});

describe('checkpoints follow model.memory', () => {
  it('a resume point holds f32 weights and both AdamW moments; another holds bf16 weights only; sizes follow the parameter count', async () => {
    setMemorySettings({ checkpointDtype: 'bf16' });
    const rt = await model();
    await rt.trainStep('sft', rows(rt), {}, 1e-2, 1);
    const resume = path.join(tmp, 'resume');
    const final = path.join(tmp, 'final');
    const manifest = { stage: 'sft', step: 1, parent: null, metrics: {}, extra: {} };
    await rt.save(resume, manifest, { resumePoint: true });
    await rt.save(final, manifest, { resumePoint: false });
    const weights = await rt.weights();
    const parameters = [...weights.values()].reduce((a, w) => a + w.length, 0);

    const r = safetensorsLayout(path.join(resume, 'model.safetensors'));
    expect([...r.dtypes]).toEqual(['F32']);
    expect(r.elements).toBe(parameters);
    expect(r.dataBytes).toBe(parameters * 4);
    const o = safetensorsLayout(path.join(resume, 'optimizer.safetensors'));
    expect(o.dataBytes).toBe(2 * parameters * 4);                  // exp_avg + exp_avg_sq, f32
    expect(manifestOf(resume)).toMatchObject({ weights: { dtype: 'F32' }, optimizerStep: 1 });

    const f = safetensorsLayout(path.join(final, 'model.safetensors'));
    expect([...f.dtypes]).toEqual(['BF16']);
    expect(f.dataBytes).toBe(parameters * 2);
    expect(fs.existsSync(path.join(final, 'optimizer.safetensors'))).toBe(false);
    expect(fs.existsSync(path.join(final, 'optimizer.json'))).toBe(false);
    expect(manifestOf(final)).toMatchObject({ weights: { dtype: 'BF16' }, optimizerStep: null });
    expect((JSON.parse(fs.readFileSync(path.join(final, 'config.json'), 'utf8')) as { torch_dtype: string }).torch_dtype).toBe('bfloat16');

    // the bf16 checkpoint loads: its weights are the trained ones rounded to bf16
    const fromFinal = await model({ dir: final });
    for (const [name, w] of await fromFinal.weights()) expect(maxDiff(w, bf16(weights.get(name)!)), name).toBe(0);
    await release(fromFinal);

    // the resume point continues exactly: one more step from it equals one more step of the model that wrote it
    const resumed = await model({ dir: resume, resume: true });
    for (const [name, w] of await resumed.weights()) expect(maxDiff(w, weights.get(name)!), name).toBe(0);
    const next = rows(rt).slice(1);
    const s1 = await rt.trainStep('sft', next, {}, 1e-2, 1);
    const s2 = await resumed.trainStep('sft', next, {}, 1e-2, 1);
    expect(Math.abs(s1['losses/total']! - s2['losses/total']!)).toBeLessThan(1e-6);
    const after = await rt.weights();
    for (const [name, w] of await resumed.weights()) expect(maxDiff(w, after.get(name)!), name).toBeLessThan(1e-7);
  }, 120_000);

  it("optimizerState 'none' writes no moments even into a resume point; 'all' writes them everywhere", async () => {
    const rt = await model();
    await rt.trainStep('sft', rows(rt), {}, 1e-2, 1);
    const manifest = { stage: 'sft', step: 1, parent: null, metrics: {}, extra: {} };
    setMemorySettings({ optimizerState: 'none' });
    await rt.save(path.join(tmp, 'none'), manifest, { resumePoint: true });
    expect(fs.existsSync(path.join(tmp, 'none', 'optimizer.safetensors'))).toBe(false);
    setMemorySettings({ optimizerState: 'all' });
    await rt.save(path.join(tmp, 'all'), manifest, { resumePoint: false });
    expect(manifestOf(path.join(tmp, 'all')).optimizerStep).toBe(1);
  }, 120_000);
});

describe('AdamW moments in bf16 (model.memory.optimizerDtype)', () => {
  it('bf16: the resume point holds BF16 moments (half the bytes), a resumed runtime continues from them; wasm refuses it', async () => {
    setMemorySettings({ optimizerDtype: 'bf16' });
    const rt = await model();
    await rt.trainStep('sft', rows(rt), {}, 1e-2, 1);
    const dir = path.join(tmp, 'bf16-moments');
    await rt.save(dir, { stage: 'sft', step: 1, parent: null, metrics: {}, extra: {} }, { resumePoint: true });
    const moments = safetensorsLayout(path.join(dir, 'optimizer.safetensors'));
    const weights = safetensorsLayout(path.join(dir, 'model.safetensors'));
    expect([...moments.dtypes]).toEqual(['BF16']);
    expect([...weights.dtypes]).toEqual(['F32']);                         // a resume point keeps f32 weights (exact)
    expect(moments.dataBytes).toBe(moments.elements * 2);
    expect(moments.elements).toBe(2 * weights.elements);                   // m and v for every weight
    const resumed = await model({ dir, resume: true });
    const next = rows(rt).reverse();
    const s1 = await rt.trainStep('sft', next, {}, 1e-2, 1);
    const s2 = await resumed.trainStep('sft', next, {}, 1e-2, 1);
    // the same moments and weights: the next step agrees (the stochastic rounding draws differ, within bf16's last bit)
    expect(Math.abs(s1['losses/total']! - s2['losses/total']!)).toBeLessThan(1e-6);
    const after = await rt.weights();
    for (const [name, w] of await resumed.weights()) expect(maxDiff(w, after.get(name)!), name).toBeLessThan(1e-4);

    const loaded = await loadCheckpoint(dir, { optimizer: false });
    const wasm = new TfjsRuntime(loaded.model, loaded.tokenizer, { backend: 'cpu', device: 'cpu' });
    expect(() => wasm.ensureOptimizer()).toThrow(/model\.memory\.optimizerDtype bf16: the wasm backend keeps AdamW moments in f32/);
  }, 120_000);

  it('auto: f32 moments for a tiny model, bf16 for a real one; a bad value is refused naming the field', () => {
    expect(resolvedMemory(100_000).optimizerDtype).toBe('f32');
    expect(resolvedMemory(494_032_768).optimizerDtype).toBe('bf16');
    expect(() => setMemorySettings({ optimizerDtype: 'f16' as never })).toThrow(/model\.memory\.optimizerDtype: expected one of "auto", "bf16", "f32", got "f16"/);
  });
});

describe('frozen weights in bf16', () => {
  it('a frozen model (the KL reference) keeps bf16 weights and scores tokens close to the f32 model; f32 keeps them exact', async () => {
    const full = await model();
    const w32 = await full.weights();
    const ids = rows(full).map((r) => ({ ids: r.ids }));
    const s32 = await full.tokenStats(ids, false);

    setMemorySettings({ frozenDtype: 'bf16' });
    const ref = await TorchRuntime.fromFolder(DIR, { probe, threads: 1, trainable: false });
    open.push(ref);
    for (const [name, w] of await ref.weights()) expect(maxDiff(w, bf16(w32.get(name)!)), name).toBe(0);
    const s16 = await ref.tokenStats(ids, false);
    await release(ref);
    const d = Math.max(...s16.map((s, i) => maxDiff(s.logprobs, s32[i]!.logprobs)));
    expect(d).toBeGreaterThan(0);            // the weights did change precision
    expect(d).toBeLessThan(0.2);             // bf16 keeps 8 bits of mantissa: log-probs move by a few hundredths here

    setMemorySettings({ frozenDtype: 'f32' });
    const ref32 = await TorchRuntime.fromFolder(DIR, { probe, threads: 1, trainable: false });
    open.push(ref32);
    for (const [name, w] of await ref32.weights()) expect(maxDiff(w, w32.get(name)!), name).toBe(0);
  }, 120_000);

  it('a LoRA base goes to bf16 and stays frozen while the adapters train', async () => {
    setMemorySettings({ frozenDtype: 'bf16' });
    const rt = await model();
    const w32 = await rt.weights();
    await rt.enableLora({ rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] }, { seed: 1 });
    const base = await rt.weights([...w32.keys()]);
    for (const [name, w] of base) expect(maxDiff(w, bf16(w32.get(name)!)), name).toBe(0);
    await rt.trainStep('sft', rows(rt), {}, 1e-2, 1);
    const trained = await rt.weights();
    for (const [name, w] of base) expect(maxDiff(trained.get(name)!, w), name).toBe(0);
    const adapters = [...trained.keys()].filter((k) => k.includes('lora_B'));
    expect(adapters.length).toBeGreaterThan(0);
    expect(Math.max(...adapters.map((k) => Math.max(...Array.from(trained.get(k)!, Math.abs))))).toBeGreaterThan(0);
  }, 120_000);
});

describe('the RL stage keeps its milestones bounded and no moments behind a finished stage', () => {
  it('steps 3, a milestone every step, keepMilestones 1: rl-2 and rl-3 stay, rl-1 and rl-latest go; only resume points had moments', async () => {
    const project = path.join(tmp, 'project');
    const { outcome, runDir } = await runPreset(project, 'spa', 'milestones', {
      // no bootstrap gate (50 held-out generations on torch): this test is about the checkpoints the stages leave
      backend: 'torch', env: { id: 'frozenlake' }, model: { memory: { keepMilestones: 1 } }, stages: { bootstrap: { gateTurns: 0 }, rl: { steps: 3, passAtKEvery: 1 } },
    });
    expect(outcome).toEqual({ status: 'completed' });
    const names = fs.readdirSync(path.join(runDir, 'checkpoints')).filter((n) => !n.startsWith('.')).sort();
    expect(names.filter((n) => n.startsWith('rl-'))).toEqual(['rl-2', 'rl-3']);
    // the tiny model's bootstrap base keeps its moments (its optimizer step records the last phase's: tests/train/bootstrap-phases)
    for (const name of names.filter((n) => n !== 'bootstrap')) {
      const dir = path.join(runDir, 'checkpoints', name);
      expect(fs.existsSync(path.join(dir, 'optimizer.safetensors')), name).toBe(false);   // every one left is final or a milestone
      expect(manifestOf(dir).optimizerStep, name).toBeNull();
    }
  }, 300_000);
});
