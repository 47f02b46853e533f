// The torch backend's failures are clear errors: no Python or no torch (an explicit request fails
// with the reason; auto falls back to TF.js and says why), a worker killed mid-step, a malformed
// frame, a non-finite loss (the step is discarded: nothing half-applied).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import { TorchRuntime } from '../../core/model/torch/runtime.js';
import { probeTorch, resetTorchProbe, FrameReader, type TorchProbe } from '../../core/model/torch/worker-client.js';
import { chooseCompute } from '../../core/train/runtime.js';
import { torchBackendInfo, torchBackendInfoAsync } from '../../core/train/compute-probe.js';
import type { TrainRow } from '../../core/model/runtime.js';
import '../../core/train/losses.js';

const FIXTURE = path.resolve(__dirname, '../fixtures/model/parity/qwen2-f32');
let probe: TorchProbe;
const saved = { python: process.env.SPA_PYTHON, backend: process.env.SPA_BACKEND };

beforeAll(async () => {
  await tf.setBackend('cpu');
  probe = probeTorch();
  if (!probe.ok) throw new Error(`these tests need a Python with torch: ${probe.reason}`);
});
afterEach(() => {
  for (const [k, v] of [['SPA_PYTHON', saved.python], ['SPA_BACKEND', saved.backend]] as const) {
    if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
  resetTorchProbe();
});

const rows = (ids: number[][]): TrainRow[] => ids.map((r) => ({ ids: r, arrays: { lossMask: r.map(() => 1) } }));
const IDS = [[277, 262, 230, 157, 150, 182], [50, 55, 224, 23, 110, 279, 8, 110]];

describe('choosing the torch backend', () => {
  it('an explicit torch request with no such Python fails with the reason; auto falls back to TF.js and says why', async () => {
    process.env.SPA_PYTHON = '/nonexistent/python3';
    delete process.env.SPA_BACKEND;
    await expect(chooseCompute('torch')).rejects.toThrow(/Backend 'torch' was requested \(run config "backend"\) but is not available: .*\/nonexistent\/python3: not found/);
    const auto = await chooseCompute('auto', { ignoreEnv: true });
    expect(auto.backend).not.toBe('torch');
    expect(auto.summary).toMatch(/not used: torch: no Python with torch >= 1\.13 \(\/nonexistent\/python3: not found\)/);
  });

  it('a Python without torch is named as such; SPA_BACKEND overrides the config', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-nopy-'));
    const fake = path.join(dir, 'python3');
    fs.writeFileSync(fake, "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n", { mode: 0o755 });
    process.env.SPA_PYTHON = fake;
    process.env.SPA_BACKEND = 'torch';
    await expect(chooseCompute('wasm')).rejects.toThrow(/requested \(env:SPA_BACKEND\).*torch is not installed/);
  });

  it("system.info's probe never blocks: the first answer is 'checking', the finished probe answers after", async () => {
    process.env.SPA_PYTHON = probe.python;
    resetTorchProbe();
    const first = torchBackendInfo();
    expect(first).toMatchObject({ name: 'torch', available: false, detail: expect.stringMatching(/^checking for a Python with PyTorch/) });
    const done = await torchBackendInfoAsync();
    expect(done.available).toBe(true);
    expect(torchBackendInfo()).toEqual(done);
    expect(done.detail).toMatch(/^PyTorch \S+ in .* \(SPA_PYTHON\); (CPU, all cores|CUDA: .*|Apple MPS)$/);
  });

  it('with a working Python, auto takes torch', async () => {
    process.env.SPA_PYTHON = probe.python;
    const auto = await chooseCompute('auto', { ignoreEnv: true });
    expect(auto.backend).toBe('torch');
    expect(auto.summary).toMatch(/^Compute backend: torch \(.*torch 1|^Compute backend: torch \(.*torch 2/);
  });
});

describe('worker failures', () => {
  const open: TorchRuntime[] = [];
  afterAll(async () => { for (const rt of open) await rt.dispose().catch(() => undefined); });

  it('a worker killed mid-step fails the step and every later call with the reason', async () => {
    const rt = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    open.push(rt);
    const step = rt.trainStep('sft', rows(IDS), {}, 1e-3, 1);
    rt.workerForTests.kill('SIGKILL');
    await expect(step).rejects.toThrow(/the PyTorch worker was killed \(SIGKILL\)/);
    await expect(rt.tokenStats([{ ids: IDS[0]! }], false)).rejects.toThrow(/was killed \(SIGKILL\)/);
  });

  it('a disposed model gives its worker back for the next model (one Python start per stage, not per load); a dead one is not reused', async () => {
    const first = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    const pid = first.workerForTests.pid;
    const before = await first.tokenStats([{ ids: IDS[0]! }], false);
    void first.dispose();   // the stages do not await dispose: the worker is free at once
    const second = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    open.push(second);
    expect(second.workerForTests.pid).toBe(pid);
    expect((await second.tokenStats([{ ids: IDS[0]! }], false))[0]!.logprobs).toEqual(before[0]!.logprobs);   // the reset left nothing behind
    second.workerForTests.kill('SIGKILL');
    await expect(second.tokenStats([{ ids: IDS[0]! }], false)).rejects.toThrow(/killed/);
    await second.dispose();
    const third = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    open.push(third);
    expect(third.workerForTests.pid).not.toBe(pid);
  });

  it('a process exits normally after disposing its model (the idle worker does not hold it, nor leave an await hanging)', () => {
    const child = spawnSync(process.execPath, ['bin/run-ts.mjs', 'tests/torch/dispose-exit-child.ts', FIXTURE], { encoding: 'utf8', timeout: 120_000 });
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout.trim()).toBe('done');
  }, 130_000);

  it('a malformed frame stops the worker with a message that says so', async () => {
    const rt = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    open.push(rt);
    rt.workerForTests.writeRaw(Buffer.from('not a frame at all'));
    await expect(rt.tokenStats([{ ids: IDS[0]! }], false)).rejects.toThrow(/exited with code 4: malformed frame: expected the magic SPAF/);
  });

  it('the engine rejects a malformed reply frame', () => {
    const reader = new FrameReader();
    expect(() => reader.push(Buffer.from('hello world, no frame here'))).toThrow(/malformed frame from the worker: expected the magic "SPAF"/);
    const bad = Buffer.concat([Buffer.from('SPAF'), Buffer.from([3, 0, 0, 0]), Buffer.from('{x}')]);
    expect(() => new FrameReader().push(bad)).toThrow(/header is not JSON/);
  });

  it('a non-finite loss fails the step and discards its gradients: the next step equals a step on a fresh copy', async () => {
    const a = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    const b = await TorchRuntime.fromFolder(FIXTURE, { probe, threads: 1 });
    open.push(a, b);
    const nan: TrainRow[] = IDS.map((r) => ({ ids: r, arrays: { lossMask: r.map(() => 1), oldLogprobs: r.map(() => 0), advantages: r.map(() => Number.NaN) } }));
    const mixed: TrainRow[] = [rows([IDS[0]!])[0]!, { ids: IDS[1]!, arrays: { lossMask: IDS[1]!.map(() => 1) } }];
    await expect(a.trainStep('grpo', nan, {}, 1e-3, 1)).rejects.toThrow(/loss 'grpo' is NaN \(not finite\)/);
    // two chunks (budget 8 tokens): the first one's gradients are already in the worker when the second fails
    await expect(a.trainStep('sft', [{ ids: IDS[0]!, arrays: { lossMask: IDS[0]!.map(() => 1) } }, { ids: [1, 2, 3, 4, 5, 6, 1e6], arrays: { lossMask: [1, 1, 1, 1, 1, 1, 1] } }], {}, 1e-3, 1, 8))
      .rejects.toThrow(/PyTorch worker: forward failed: IndexError/);
    await a.trainStep('sft', mixed, {}, 1e-3, 1);
    await b.trainStep('sft', mixed, {}, 1e-3, 1);
    const wa = await a.weights(['model.embed_tokens.weight', 'model.norm.weight']);
    const wb = await b.weights(['model.embed_tokens.weight', 'model.norm.weight']);
    for (const [k, v] of wa) expect(Array.from(v), k).toEqual(Array.from(wb.get(k)!));
  });
});
