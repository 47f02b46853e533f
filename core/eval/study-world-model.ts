// The world-model rows of a study table: what the pre-registered rule's criterion 1 reads (was the
// world model learned?), per method and env, from each run's record or run folder alone:
// - after SFT: exact observation / prediction on the policy's own turns at RL step 0 (rl/wm* curves);
// - end of run: the same on the final eval's rollouts (eval.wm);
// - first turns of the eval puzzles beside the base (eval.worldModelVersusBase): observation exact,
//   and the prediction given the action (true observation and plan forced) on state-changing turns.
// Plain-format methods have none of these and get no row.
import type { StudyRun } from './study.js';

/** A type, not an interface: rows go out through the API as records of numbers. */
export type WorldModelValues = {
  afterSftObservation?: number; afterSftPrediction?: number;
  endObservation?: number; endPrediction?: number;
  firstObservation?: number; firstObservationBase?: number;
  givenAction?: number; givenActionBase?: number;
};

export type WorldModelKey = keyof WorldModelValues;

/** One (method, env): the mean of each value over the runs that have it, and each run's value by seed. */
export interface WorldModelRow { method: string; env: string; seeds: number[]; mean: WorldModelValues; bySeed: Array<{ seed: number } & WorldModelValues> }

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** `exact` of a world-model summary that saw turns (a plain-format run logs zeros over 0 turns). */
function measured(summary: Record<string, unknown>): number | undefined {
  return num(summary.turns) !== undefined && (summary.turns as number) > 0 ? num(summary.exact) : undefined;
}

/** The first value logged at RL step 0 (after SFT; a resumed run may log the step twice). */
function atStepZero(run: StudyRun, metric: string): number | undefined {
  const curve = run.curves?.rl?.[metric];
  const i = curve ? curve.steps.indexOf(0) : -1;
  return i >= 0 ? num(curve!.values[i]) : undefined;
}

/** A run's world-model values; empty when it measured none (a plain-format method). */
export function runWorldModel(run: StudyRun): WorldModelValues {
  const ev = obj(run.eval);
  const wm = obj(ev.wm), versus = obj(ev.worldModelVersusBase);
  const model = obj(versus.model), base = obj(versus.base);
  const out: WorldModelValues = {
    afterSftObservation: atStepZero(run, 'rl/wmObservationExact'),
    afterSftPrediction: atStepZero(run, 'rl/wmPredictionExact'),
    endObservation: measured(obj(wm.observation)),
    endPrediction: measured(obj(wm.prediction)),
    firstObservation: num(model.observationExact),
    firstObservationBase: num(base.observationExact),
    givenAction: num(obj(model.conditioned).exactChanged),
    givenActionBase: num(obj(base.conditioned).exactChanged),
  };
  for (const k of Object.keys(out) as WorldModelKey[]) if (out[k] === undefined) delete out[k];
  return out;
}

export function worldModelRows(runs: readonly StudyRun[], methods: string[], envs: string[]): WorldModelRow[] {
  const rows: WorldModelRow[] = [];
  for (const method of methods) for (const env of envs) {
    const bySeed = runs.filter((r) => r.method === method && r.env === env && r.eval)
      .map((r) => ({ seed: r.seed, ...runWorldModel(r) }))
      .filter((v) => Object.keys(v).length > 1);
    if (bySeed.length === 0) continue;
    const mean: WorldModelValues = {};
    const keys = [...new Set(bySeed.flatMap((v) => Object.keys(v).filter((k) => k !== 'seed')))] as WorldModelKey[];
    for (const k of keys) {
      const xs = bySeed.map((v) => v[k]).filter((x): x is number => x !== undefined);
      mean[k] = xs.reduce((a, x) => a + x, 0) / xs.length;
    }
    rows.push({ method, env, seeds: bySeed.map((v) => v.seed), mean, bySeed });
  }
  return rows;
}

const pct = (v: number | undefined): string => (v === undefined ? '–' : (100 * v).toFixed(1));

/** "81.0 (80.1, 82.0)": the mean, then each seed's value when there are several. */
function cell(row: WorldModelRow, key: WorldModelKey, baseKey?: WorldModelKey): string {
  const values = row.bySeed.map((v) => v[key]).filter((x): x is number => x !== undefined);
  if (values.length === 0) return '–';
  const text = values.length > 1 ? `${pct(row.mean[key])} (${values.map(pct).join(', ')})` : pct(row.mean[key]);
  return baseKey && row.mean[baseKey] !== undefined ? `${text}; base ${pct(row.mean[baseKey])}` : text;
}

export function worldModelMarkdown(rows: WorldModelRow[]): string[] {
  if (rows.length === 0) return [];
  const lines = [
    '| world model, exact match % (mean; each seed) | env | seeds | after SFT: observation | after SFT: prediction | end: observation | end: prediction ' +
      '| first turns: observation | first turns: prediction given the action, state-changing |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.method} | ${r.env} | ${r.seeds.join(', ')} | ${cell(r, 'afterSftObservation')} | ${cell(r, 'afterSftPrediction')} ` +
      `| ${cell(r, 'endObservation')} | ${cell(r, 'endPrediction')} | ${cell(r, 'firstObservation', 'firstObservationBase')} ` +
      `| ${cell(r, 'givenAction', 'givenActionBase')} |`);
  }
  lines.push('', 'After SFT = RL step 0 on the policy\'s own turns (held-out puzzles; the starting model for a method without SFT); ' +
    'end = the final eval\'s rollouts; first turns = the first turn ' +
    'of the eval puzzles beside the shipped base, the prediction there written after the true observation and one forced action.');
  return lines;
}
