// Shared helpers for the pipeline tests: run a preset's smoke size in-process into a project folder.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { RunConfigSchema, type RunConfig, type RunConfigInput } from '../../core/api/run-config.js';
import { presetConfig } from '../../core/train/presets.js';
import { mergeConfig } from '../../core/train/presets.js';
import { executeRun } from '../../core/engine/runner.js';
import { loadStage, planStages } from '../../core/engine/stages.js';
import type { RunEvent } from '../../core/api/records.js';

export function tempProject(prefix = 'spa-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * `backend` defaults to wasm here (not auto): the pipeline tests were written for TF.js, and auto
 * would move them to the torch worker wherever PyTorch is installed (CI has it); tests/torch runs
 * the pipeline on torch on purpose.
 * The bootstrap gate runs on GATE_TURNS held-out turns unless the test sets stages.bootstrap.gateTurns: the smoke size's
 * 50 generated turns were most of a smoke bootstrap's time (issue 37 item 7), and the gate's code is the same on 5.
 */
export const GATE_TURNS = 5;
export async function runPreset(project: string, preset: string, runId: string, overrides: RunConfigInput = {}, opts: { signal?: AbortSignal; onEvent?: (e: RunEvent) => void } = {}) {
  // env: Sokoban unless the test names one; the pipeline tests were written when it was the default env (now FrozenLake, issue 36)
  const withBackend = mergeConfig(
    { backend: 'wasm', env: { id: 'sokoban' }, stages: { bootstrap: { gateTurns: GATE_TURNS } } }, overrides as Record<string, unknown>,
  ) as RunConfigInput;
  const config: RunConfig = RunConfigSchema.parse(mergeConfig(presetConfig(preset, 'smoke', withBackend) as Record<string, unknown>, withBackend as Record<string, unknown>));
  const runDir = join(project, 'runs', runId);
  const stages = planStages(config);
  const events: RunEvent[] = [];
  const outcome = await executeRun({
    runId, runDir, config, stages, attempt: 1, signal: opts.signal ?? new AbortController().signal, loadStage,
    send: (e) => { events.push(e); opts.onEvent?.(e); },
  });
  return { outcome, runDir, stages, events, config };
}

export function readJsonl(path: string): unknown[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown);
}
