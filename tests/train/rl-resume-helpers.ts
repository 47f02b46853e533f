// Helpers of the RL resume tests (tests/train/rl-resume-exact.test.ts on TF.js, tests/torch/rl-resume-exact.test.ts on the
// torch worker): the smallest RL run that shows an inexact resume, a kill simulated right after one of the stage's writes,
// and comparisons of every metric value, Pass@k file and milestone checkpoint of two runs.
import { expect } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { RunConfigSchema, type RunConfig, type RunConfigInput } from '../../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../../core/train/presets.js';
import { executeRun } from '../../core/engine/runner.js';
import { loadStage, planStages } from '../../core/engine/stages.js';
import type { RunEvent } from '../../core/api/records.js';
import type { StageContext, StageDefinition } from '../../core/api/stage.js';
import { sha256File } from '../../core/model/checkpoint.js';
import { readJsonl } from './helpers.js';

export const RL_RESUME_OVERRIDES: RunConfigInput = {
  env: { id: 'frozenlake' },
  seeds: { base: 7 },
  model: { source: 'preset', preset: 'tiny', criticMode: 'shared-trunk' },
  stages: { plan: { order: ['rl'] }, rl: { steps: 3, groups: 1, groupSize: 2, passAtKEvery: 1, passAtKPuzzles: 1 } },
};

/**
 * A kill right after one of the stage's writes: the context throws once the write is done (nothing of the stage runs after
 * it), after calling `before` (e.g. kill -9 of the torch worker). `episode`: no kill; `before` runs once the `count`-th
 * episode record of `file` is written (e.g. a Stop between a step's rollouts and its update).
 */
export type KillAt = (
  { after: 'saveState'; nextStep: number } | { after: 'writeJson'; file: string } | { after: 'appendJsonl'; file: string; appends: number }
  | { after: 'episode'; file: string; count: number } | { after: 'updatePoint'; step: number; batchesDone: number }
  | { after: 'progress'; message: RegExp }
) & { before?: () => void };

class SimulatedKill extends Error {}

function killingContext(ctx: StageContext, kill: KillAt): StageContext {
  let appended = 0, episodes = 0, progressFired = false;
  return new Proxy(ctx, {
    get(target, key, receiver) {
      if (key === 'episode' && kill.after === 'episode') {
        return (file: string, record: Parameters<StageContext['episode']>[1]) => {
          target.episode(file, record);
          if (file === kill.file && ++episodes === kill.count) kill.before?.();
        };
      }
      // an RL update's resume point (core/train/rl-stage.ts UpdatePoint): the state written with `update`
      if (key === 'saveState' && kill.after === 'updatePoint') {
        return (state: Record<string, unknown>) => {
          target.saveState(state);
          const update = state.update as { step: number; batchesDone: number } | undefined;
          if (update?.step === kill.step && update.batchesDone === kill.batchesDone) {
            kill.before?.();
            throw new SimulatedKill(`simulated kill -9 after the resume point of step ${kill.step + 1} at ${kill.batchesDone} updates`);
          }
        };
      }
      // no kill: `before` runs at the first progress message that matches (e.g. a Stop during an update)
      if (key === 'progress' && kill.after === 'progress') {
        return (step: number, total: number, message?: string) => {
          target.progress(step, total, message);
          if (!progressFired && message !== undefined && kill.message.test(message)) { progressFired = true; kill.before?.(); }
        };
      }
      if (key === 'saveState' && kill.after === 'saveState') {
        return (state: Record<string, unknown>) => {
          target.saveState(state);
          if (state.nextStep === kill.nextStep) kill.before?.();
          if (state.nextStep === kill.nextStep) throw new SimulatedKill(`simulated kill -9 after the state of step ${kill.nextStep}`);
        };
      }
      if (key === 'writeJson' && kill.after === 'writeJson') {
        return (rel: string, value: unknown) => {
          target.writeJson(rel, value);
          if (rel === kill.file) kill.before?.();
          if (rel === kill.file) throw new SimulatedKill(`simulated kill -9 after ${rel}`);
        };
      }
      if (key === 'appendJsonl' && kill.after === 'appendJsonl') {
        return (rel: string, rows: unknown[], opts?: { sync?: boolean }) => {
          target.appendJsonl(rel, rows, opts);
          if (rel === kill.file && ++appended === kill.appends) {
            kill.before?.();
            throw new SimulatedKill(`simulated kill -9 after append ${kill.appends} to ${rel}`);
          }
        };
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/** The RL stage's ctx.progress messages as called, before the 250 ms throttle of the run's progress events. */
function recordingContext(ctx: StageContext, messages: string[]): StageContext {
  return new Proxy(ctx, {
    get(target, key, receiver) {
      if (key === 'progress') {
        return (step: number, total: number, message?: string) => { if (message !== undefined) messages.push(message); target.progress(step, total, message); };
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/** runPreset (tests/train/helpers.ts) with an optional kill in the RL stage; `progress` receives its progress messages. */
export async function runRl(
  project: string, runId: string, overrides: RunConfigInput,
  opts: { kill?: KillAt; signal?: AbortSignal; onEvent?: (e: RunEvent) => void; progress?: string[] } = {},
) {
  const input: RunConfigInput = { backend: 'wasm', workers: 0, ...overrides };   // one thread: the same sums in every run
  const config: RunConfig = RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'smoke', input) as Record<string, unknown>, input as Record<string, unknown>));
  const runDir = join(project, 'runs', runId);
  const events: RunEvent[] = [];
  const load = async (name: string): Promise<StageDefinition> => {
    const def = await loadStage(name);
    const kill = opts.kill, progress = opts.progress;
    if (name !== 'rl' || (!kill && !progress)) return def;
    return { ...def, run: (ctx) => def.run(progress ? recordingContext(kill ? killingContext(ctx, kill) : ctx, progress) : killingContext(ctx, kill!)) };
  };
  const outcome = await executeRun({
    runId, runDir, config, stages: planStages(config), attempt: 1, signal: opts.signal ?? new AbortController().signal, loadStage: load,
    send: (e) => { events.push(e); opts.onEvent?.(e); },
  });
  return { outcome, runDir, events };
}

type Point = { stage: string; step: number; values: Record<string, number> };

/** Every metric value of a run by stage/step/name; a point logged twice (a redone step) must repeat its value exactly. */
export function metricValues(runDir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of readJsonl(join(runDir, 'metrics.jsonl')) as Point[]) {
    for (const [k, v] of Object.entries(p.values)) {
      const key = `${p.stage}/${p.step}/${k}`;
      if (out.has(key)) expect(v, `${key} re-logged with another value`).toBe(out.get(key));
      out.set(key, v);
    }
  }
  return out;
}

function stripTimes(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'time' || key === 'wallSeconds' || key === 'created' ? undefined : v)));
}

/** The RL stage's products that a resume must reproduce: Pass@k files and the milestone checkpoints' weights. */
export function rlProducts(runDir: string) {
  const evalDir = join(runDir, 'eval');
  const passAtK = readdirSync(evalDir).filter((f) => f.startsWith('rl-step-')).sort()
    .map((f) => [f, stripTimes(JSON.parse(readFileSync(join(evalDir, f), 'utf8')))] as const);
  return { passAtK };
}

export async function weightHashes(runDir: string): Promise<Record<string, string>> {
  const dir = join(runDir, 'checkpoints');
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).filter((n) => /^rl-\d+$/.test(n)).sort()) {
    out[name] = await sha256File(join(dir, name, 'model.safetensors'));
    // model.lora: the trained weights are the adapters (model.safetensors holds the frozen base)
    if (existsSync(join(dir, name, 'adapter_model.safetensors'))) out[`${name}/adapters`] = await sha256File(join(dir, name, 'adapter_model.safetensors'));
  }
  return out;
}

export function expectSameRun(resumed: string, reference: string): void {
  const a = metricValues(resumed);
  const b = metricValues(reference);
  const differ = [...b].filter(([k, v]) => a.get(k) !== v).map(([k, v]) => `${k}: ${a.get(k) ?? 'missing'} vs ${v}`);
  const extra = [...a.keys()].filter((k) => !b.has(k));
  expect(differ, `${differ.length} of ${b.size} metric values differ or are missing`).toEqual([]);
  expect(extra).toEqual([]);
  expect(rlProducts(resumed)).toEqual(rlProducts(reference));
}

