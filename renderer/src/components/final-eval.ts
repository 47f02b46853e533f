// The final evaluation, read off a run's latest eval/… metrics (names: docs/metrics.md): the
// world-model table the terminal prints at the end of a run (core/train/world-model-check.ts
// versusBaseLines: this model / base / chance / oracle; observation exact, prediction exact, and
// prediction exact given the action), Pass@k, and the other eval metrics, folded; and the verdict
// line above them, by the rule the Studies table uses (core/api/verdict.ts), read off eval/final.json.
import { nameOf } from './metric-names.js';
import { chanceVerdict, widenForSmallN, worldModelVerdict, type ChanceVerdict, type VerdictInterval, type WorldModelVerdict } from '../../../core/api/verdict.js';

export interface WmRow {
  name: 'this model' | 'base' | 'chance' | 'oracle';
  observationExact: number | null;
  predictionExact: number | null;
  givenAction: number | null;     // prediction exact given the action, on turns it changes the state
}

export interface FinalEval {
  worldModel: WmRow[];            // empty when the eval ran no world-model check
  passAt: Array<{ k: number; value: number }>;
  /** Pass@k of the eval stage's chance and oracle rows on the same puzzles (eval/chance|oracle/passAtK); empty when not logged. */
  passAtReference: Array<{ name: 'chance' | 'oracle'; values: Record<number, number> }>;
  headline: Array<{ metric: string; label: string; value: number }>;
  other: Array<{ metric: string; value: number }>;
}

const WM = 'eval/wmCheck/';

export function finalEval(latest: Record<string, number>): FinalEval {
  const v = (name: string): number | null => { const x = latest[name]; return x !== undefined && Number.isFinite(x) ? x : null; };
  const worldModel: WmRow[] = [];
  if (v(`${WM}observationExact`) !== null || v(`${WM}predictionExact`) !== null) {
    worldModel.push({ name: 'this model', observationExact: v(`${WM}observationExact`), predictionExact: v(`${WM}predictionExact`), givenAction: v(`${WM}conditionedExact`) });
    if (v(`${WM}baseObservationExact`) !== null || v(`${WM}basePredictionExact`) !== null) {
      worldModel.push({ name: 'base', observationExact: v(`${WM}baseObservationExact`), predictionExact: v(`${WM}basePredictionExact`), givenAction: v(`${WM}baseConditionedExact`) });
    }
    if (v(`${WM}conditionedChance`) !== null) worldModel.push({ name: 'chance', observationExact: null, predictionExact: null, givenAction: v(`${WM}conditionedChance`) });
    if (v(`${WM}conditionedOracle`) !== null) worldModel.push({ name: 'oracle', observationExact: null, predictionExact: null, givenAction: v(`${WM}conditionedOracle`) });
  }
  const passAt: FinalEval['passAt'] = [];
  for (const [name, value] of Object.entries(latest)) {
    const m = /^eval\/passAt(\d+)$/.exec(name);
    if (m && Number.isFinite(value)) passAt.push({ k: Number(m[1]), value });
  }
  passAt.sort((a, b) => a.k - b.k);
  const passAtReference: FinalEval['passAtReference'] = [];
  for (const name of ['chance', 'oracle'] as const) {
    const values: Record<number, number> = {};
    for (const [metric, value] of Object.entries(latest)) {
      const m = new RegExp(`^eval/${name}/passAt(\\d+)$`).exec(metric);
      if (m && Number.isFinite(value)) values[Number(m[1])] = value;
    }
    if (Object.keys(values).length > 0) passAtReference.push({ name, values });
  }
  // headlines: exact match where it exists (cell accuracy only when no exact measure was logged)
  const headline: FinalEval['headline'] = [];
  const add = (metric: string, label: string) => { const x = v(metric); if (x !== null) headline.push({ metric, label, value: x }); };
  add('eval/success', nameOf('eval/success'));
  add('eval/wmObservationExact', nameOf('eval/wmObservationExact'));
  add('eval/wmPredictionExact', nameOf('eval/wmPredictionExact'));
  if (v('eval/wmPredictionExact') === null) add('eval/wmPredictionCellAccuracy', nameOf('eval/wmPredictionCellAccuracy'));
  const shown = new Set([...headline.map((h) => h.metric), ...passAt.map((p) => `eval/passAt${p.k}`)]);
  for (const n of Object.keys(latest)) if (n.startsWith(WM) || /^eval\/(chance|oracle)\/passAt\d+$/.test(n)) shown.add(n);
  const other = Object.entries(latest)
    .filter(([n, x]) => n.startsWith('eval/') && !shown.has(n) && Number.isFinite(x))
    .map(([metric, value]) => ({ metric, value }))
    .sort((a, b) => a.metric.localeCompare(b.metric));
  return { worldModel, passAt, passAtReference, headline, other };
}

/** The verdict line's numbers: Pass@1 against chance / oracle, the world model against the base; null parts when not measured. */
export interface FinalVerdict {
  pass: {
    passAt1: VerdictInterval;                 // the interval the verdict reads (widened under SMALL_N_PUZZLES puzzles)
    widened: boolean;                         // the bootstrap over the puzzles was widened to Wilson's (small n)
    chance: number | null; oracle: number | null;
    verdict: ChanceVerdict | null;          // null: no chance row, or no interval to compare
    puzzles: number | null; samplesPerPuzzle: number | null; episodes: number | null;
  } | null;
  worldModel: {
    model: number; base: number; n: number | null;   // prediction given the action, on n state-changing turns
    low: number | null; high: number | null;          // Wilson 95% of the model's rate (null without n)
    verdict: WorldModelVerdict | null;                // null without n
  } | null;
  /** n behind the headline numbers: eval episodes' well-formed turns, the world-model check's first turns. */
  wmTurns: number | null;
  checkTurns: number | null;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? v as Json : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * The verdict of a finished evaluation. `final` is eval/final.json's content (intervals and n live
 * there); without it the latest eval/… metrics give the means only, and no verdict is stated.
 */
export function finalVerdict(latest: Record<string, number>, final: Json | null): FinalVerdict {
  const v = (name: string): number | null => num(latest[name]);
  const f = final ?? {};
  // Pass@1 with its interval (bootstrap over the puzzles), chance and oracle rows on the same puzzles
  const p1 = obj(obj(f['passAtK'])?.['1']);
  const mean = num(p1?.['mean']) ?? v('eval/passAt1');
  const refs = Array.isArray(f['reference']) ? (f['reference'] as unknown[]).map(obj).filter((r): r is Json => r !== null) : [];
  const ref = (kind: string) => num(obj(refs.find((r) => r['kind'] === kind)?.['passAt'])?.['1']) ?? v(`eval/${kind}/passAt1`);
  let pass: FinalVerdict['pass'] = null;
  if (mean !== null) {
    const boot: VerdictInterval = { mean, low: num(p1?.['low']), high: num(p1?.['high']) };
    const puzzles = num(f['puzzles']);
    // under SMALL_N_PUZZLES puzzles the bootstrap is widened to Wilson's, as in the Studies table (the same rule)
    const wide = boot.low !== null && boot.high !== null && puzzles !== null ? widenForSmallN({ mean, low: boot.low, high: boot.high }, puzzles) : null;
    const passAt1: VerdictInterval = wide ? { mean, low: wide.low, high: wide.high } : boot;
    const chance = ref('chance');
    pass = {
      passAt1, widened: wide?.widened ?? false, chance, oracle: ref('oracle'),
      verdict: chance !== null && passAt1.low !== null && passAt1.high !== null ? chanceVerdict(passAt1, chance) : null,
      puzzles, samplesPerPuzzle: num(f['samplesPerPuzzle']), episodes: num(f['episodes']),
    };
  }
  // the world model: prediction given the action, this model against the base on the same turns
  const vb = obj(f['worldModelVersusBase']);
  const mc = obj(obj(vb?.['model'])?.['conditioned']), bc = obj(obj(vb?.['base'])?.['conditioned']);
  const model = num(mc?.['exactChanged']) ?? v('eval/wmCheck/conditionedExact');
  const base = num(bc?.['exactChanged']) ?? v('eval/wmCheck/baseConditionedExact');
  const n = num(mc?.['changedTurns']);
  let worldModel: FinalVerdict['worldModel'] = null;
  if (model !== null && base !== null) {
    const w = n !== null && n >= 1 ? worldModelVerdict(model, base, Math.round(n)) : null;
    worldModel = { model, base, n, low: w?.low ?? null, high: w?.high ?? null, verdict: w?.verdict ?? null };
  }
  const wm = obj(obj(f['wm'])?.['prediction']);
  return { pass, worldModel, wmTurns: num(wm?.['turns']) ?? v('eval/wmTurns'), checkTurns: num(obj(vb?.['model'])?.['turns']) };
}

const p = (x: number) => `${(100 * x).toFixed(1)}%`;
const iv = (low: number | null, high: number | null) => (low !== null && high !== null ? ` [${(100 * low).toFixed(1)}, ${(100 * high).toFixed(1)}]` : '');

/** The Pass@1 half of the verdict line, in words ("Pass@1 12.5% [3.1, 25.0] on 8 puzzles × 4 = 32 episodes: below chance (30.1%; oracle 96.9%)"). */
export function passVerdictText(pass: NonNullable<FinalVerdict['pass']>): string {
  const on = pass.puzzles !== null ? ` on ${pass.puzzles} puzzle${pass.puzzles === 1 ? '' : 's'}${pass.samplesPerPuzzle !== null ? ` × ${pass.samplesPerPuzzle}` : ''}${pass.episodes !== null ? ` = ${pass.episodes} episodes` : ''}` : ' (n unknown)';
  const refs = [pass.chance !== null ? `chance ${p(pass.chance)}` : null, pass.oracle !== null ? `oracle ${p(pass.oracle)}` : null].filter(Boolean).join('; ');
  const head = `Pass@1 ${p(pass.passAt1.mean)}${iv(pass.passAt1.low, pass.passAt1.high)}${pass.widened ? ' (Wilson over the puzzles: few puzzles)' : ''}${on}`;
  if (pass.verdict) return `${head}; ${refs}`;
  if (pass.chance === null) return `${head}: no chance row on these puzzles, no verdict`;
  return `${head}: no interval recorded, no verdict (${refs})`;
}

/** The numbers behind the world-model verdict ("prediction given the action 60.0% [45.5, 73.0] vs the base's 0.0%, n = 45 state-changing turns"). */
export function worldModelVerdictText(wm: NonNullable<FinalVerdict['worldModel']>): string {
  const body = `prediction given the action ${p(wm.model)}${iv(wm.low, wm.high)} vs the base's ${p(wm.base)}`;
  if (wm.verdict === null) return `${body} (n unknown, no verdict)`;
  return `${body}, n = ${wm.n} state-changing turns`;
}
