// Host-side readers of a run's streams, incremental and tolerant: metrics, events, the rollout
// index, SFT datasets and evaluation files. Each run gets one cached reader; every query first
// reads only what was appended since the previous one (live tails cost the new bytes only).
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  EpisodeRecordSchema, EpisodeSummarySchema, MetricPointSchema, RunEventSchema,
  type EpisodeRecord, type EpisodeSummary, type MetricPoint, type RunEvent,
} from '../api/records.js';
import type { DatasetStats, EvalResult, MetricSeries, SftRow } from '../api/contract.js';
import { DatasetStatsSchema, SftRowSchema } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import { readJsonIfExists } from './atomic.js';
import { downsampleMinMax } from './downsample.js';
import { JsonlTail, LineIndex, readLineAt, type SkippedLine } from './jsonl.js';
import { EVENTS_FILE, insideRun, METRICS_FILE, ROLLOUT_INDEX, SFT_STATS, sftFile } from './run-files.js';

// Fast structural checks for the hot streams (tens of thousands of rows); zod only explains a failure.
const num = (v: unknown) => typeof v === 'number';
const str = (v: unknown) => typeof v === 'string';
/** Row validators of the run's JSONL streams (valid JSON of the wrong shape is skipped like a torn line). */
export function checkMetricPoint(v: unknown): MetricPoint {
  const p = v as MetricPoint;
  if (p && typeof p === 'object' && str(p.stage) && num(p.step) && num(p.time) && (p.episodes === undefined || num(p.episodes))
    && p.values && typeof p.values === 'object' && Object.values(p.values).every(num)) return p;
  return MetricPointSchema.parse(v);
}
export function checkSummary(v: unknown): EpisodeSummary {
  const e = v as EpisodeSummary;
  if (e && typeof e === 'object' && str(e.id) && str(e.stage) && str(e.file) && Number.isInteger(e.step) && Number.isInteger(e.seed)
    && Number.isInteger(e.group) && Number.isInteger(e.sample) && typeof e.success === 'boolean' && num(e.totalReward)
    && Number.isInteger(e.numTurns) && Number.isInteger(e.formatErrors) && Number.isInteger(e.invalidActions)
    && Number.isInteger(e.offset) && Number.isInteger(e.length)) return e;
  return EpisodeSummarySchema.parse(v);
}

export interface RolloutFilter {
  stage?: string; step?: number; stepMin?: number; stepMax?: number;
  outcome: 'all' | 'success' | 'failure'; seed?: number; formatErrors: 'any' | 'none' | 'some';
  sort: 'index' | 'reward-asc' | 'reward-desc'; offset: number; limit: number;
}

export interface MetricQuery {
  names: string[]; stage?: string; x: 'step' | 'time' | 'episodes'; xMin?: number; xMax?: number; maxPoints: number;
}

export class RunData {
  private readonly metrics: JsonlTail<MetricPoint>;
  private readonly events: JsonlTail<RunEvent>;
  private readonly index: JsonlTail<EpisodeSummary>;
  private readonly byId = new Map<string, number>();
  private hasDuplicates = false;
  private current: EpisodeSummary[] | null = null;
  private readonly datasets = new Map<string, LineIndex>();

  constructor(readonly runId: string, readonly dir: string) {
    this.metrics = new JsonlTail(path.join(dir, METRICS_FILE), checkMetricPoint);
    this.events = new JsonlTail(path.join(dir, EVENTS_FILE), (v) => RunEventSchema.parse(v));
    this.index = new JsonlTail(path.join(dir, ROLLOUT_INDEX), checkSummary);
  }

  /** Lines skipped so far (torn or invalid), per stream, for reporting. */
  skipped(): Record<string, SkippedLine[]> {
    return { [METRICS_FILE]: this.metrics.skipped, [EVENTS_FILE]: this.events.skipped, [ROLLOUT_INDEX]: this.index.skipped };
  }

  // ── events ──
  readEvents(types: string[] | undefined, offset: number, limit: number): { events: RunEvent[]; total: number; skipped: number } {
    this.events.read();
    const all = types && types.length ? this.events.rows.filter((e) => types.includes(e.type)) : this.events.rows;
    return { events: all.slice(offset, offset + limit), total: all.length, skipped: this.events.skipped.length };
  }

  // ── metrics ──
  metricPoints(): MetricPoint[] { this.metrics.read(); return this.metrics.rows; }

  metricNames(): { names: string[]; stages: string[] } {
    const names = new Set<string>();
    const stages = new Set<string>();
    for (const p of this.metricPoints()) { stages.add(p.stage); for (const k of Object.keys(p.values)) names.add(k); }
    return { names: [...names].sort(), stages: [...stages] };
  }

  /** Columnar copy of the metrics per (stage, name), extended incrementally as points arrive. */
  private readonly columns = new Map<string, { stage: string; name: string; step: number[]; time: number[]; episodes: number[]; y: number[] }>();
  private columnsFrom = 0;

  private updateColumns(): void {
    const points = this.metricPoints();
    if (points.length < this.columnsFrom) { this.columns.clear(); this.columnsFrom = 0; }   // file replaced
    for (let i = this.columnsFrom; i < points.length; i++) {
      const p = points[i]!;
      for (const [name, value] of Object.entries(p.values)) {
        if (!Number.isFinite(value)) continue;
        const key = `${p.stage}\u0000${name}`;
        let c = this.columns.get(key);
        if (!c) this.columns.set(key, (c = { stage: p.stage, name, step: [], time: [], episodes: [], y: [] }));
        c.step.push(p.step); c.time.push(p.time); c.episodes.push(p.episodes ?? Number.NaN); c.y.push(value);
      }
    }
    this.columnsFrom = points.length;
  }

  metricSeries(q: MetricQuery): MetricSeries[] {
    this.updateColumns();
    const out: MetricSeries[] = [];
    for (const name of q.names) {
      for (const c of this.columns.values()) {
        if (c.name !== name || (q.stage !== undefined && c.stage !== q.stage)) continue;
        const xsAll = q.x === 'step' ? c.step : q.x === 'time' ? c.time : c.episodes;
        let xs: number[] = [];
        let ys: number[] = [];
        let sorted = true;
        for (let i = 0; i < xsAll.length; i++) {
          const x = xsAll[i]!;
          if (!Number.isFinite(x) || (q.xMin !== undefined && x < q.xMin) || (q.xMax !== undefined && x > q.xMax)) continue;
          if (xs.length && x < xs[xs.length - 1]!) sorted = false;
          xs.push(x); ys.push(c.y[i]!);
        }
        if (!sorted) {
          // A resumed stage may re-log earlier steps: order by x (stable).
          const order = xs.map((_, i) => i).sort((a, b) => xs[a]! - xs[b]! || a - b);
          xs = order.map((i) => xs[i]!); ys = order.map((i) => ys[i]!);
        }
        if (xs.length === 0) continue;
        out.push({ runId: this.runId, stage: c.stage, name: c.name, ...downsampleMinMax(xs, ys, q.maxPoints) });
      }
    }
    return out;
  }

  // ── rollouts ──
  /**
   * The current episode summaries. A row whose id appears again later is superseded by the later
   * one: a training step redone after an interrupted engine writes its episodes again, and the
   * redone episodes are the ones that count (queries, facets and rollouts.get agree).
   */
  summaries(): EpisodeSummary[] {
    const before = this.index.rows;
    let start = before.length;
    this.index.read();
    const rows = this.index.rows;
    if (rows !== before) {                 // the index file was replaced: start over
      this.byId.clear();
      this.hasDuplicates = false;
      start = 0;
    } else if (rows.length === start && this.current) return this.current;
    for (let i = start; i < rows.length; i++) {
      const id = rows[i]!.id;
      if (this.byId.has(id)) this.hasDuplicates = true;
      this.byId.set(id, i);
    }
    this.current = this.hasDuplicates ? rows.filter((r, i) => this.byId.get(r.id) === i) : rows;
    return this.current;
  }

  queryRollouts(f: RolloutFilter): { episodes: EpisodeSummary[]; total: number } {
    let rows = this.summaries().filter((e) =>
      (f.stage === undefined || e.stage === f.stage)
      && (f.step === undefined || e.step === f.step)
      && (f.stepMin === undefined || e.step >= f.stepMin)
      && (f.stepMax === undefined || e.step <= f.stepMax)
      && (f.outcome === 'all' || (f.outcome === 'success') === e.success)
      && (f.seed === undefined || e.seed === f.seed)
      && (f.formatErrors === 'any' || (f.formatErrors === 'some') === (e.formatErrors > 0)));
    if (f.sort !== 'index') {
      const sign = f.sort === 'reward-asc' ? 1 : -1;
      rows = [...rows].sort((a, b) => sign * (a.totalReward - b.totalReward));
    }
    return { episodes: rows.slice(f.offset, f.offset + f.limit), total: rows.length };
  }

  facets(): { stages: { stage: string; count: number; minStep: number; maxStep: number; successes: number }[] } {
    const m = new Map<string, { stage: string; count: number; minStep: number; maxStep: number; successes: number }>();
    for (const e of this.summaries()) {
      let s = m.get(e.stage);
      if (!s) m.set(e.stage, (s = { stage: e.stage, count: 0, minStep: e.step, maxStep: e.step, successes: 0 }));
      s.count++; s.minStep = Math.min(s.minStep, e.step); s.maxStep = Math.max(s.maxStep, e.step);
      if (e.success) s.successes++;
    }
    return { stages: [...m.values()] };
  }

  getEpisode(id: string): EpisodeRecord {
    this.summaries();
    const i = this.byId.get(id);
    if (i === undefined)
      throw new WorkbenchError('NotFound', `episode ${JSON.stringify(id)} not found in run ${this.runId} (not in rollouts/index.jsonl)`, {
        where: 'rollouts.get id',
        received: id,
      });
    const s = this.index.rows[i]!;
    const file = insideRun(this.dir, s.file, 'rollout index file');
    let raw: unknown;
    try {
      raw = readLineAt(file, { offset: s.offset, length: s.length });
    } catch (err) {
      throw new WorkbenchError('CorruptData', `episode ${id}: could not read ${s.file} at byte ${s.offset} (${(err as Error).message})`, { where: s.file });
    }
    const parsed = EpisodeRecordSchema.safeParse(raw);
    if (!parsed.success) {
      throw new WorkbenchError('CorruptData', `episode ${id} in ${s.file} does not match the EpisodeRecord ` +
        `schema: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`, {
        where: s.file, issues: parsed.error.issues.slice(0, 20).map((i) => ({ path: i.path.join('.'), message: i.message })),
      });
    }
    return parsed.data;
  }

  // ── datasets ──
  datasetPage(split: 'train' | 'val', offset: number, limit: number): { rows: SftRow[]; total: number; skipped: number } {
    const rel = sftFile(split);
    let idx = this.datasets.get(rel);
    if (!idx) this.datasets.set(rel, (idx = new LineIndex(path.join(this.dir, rel))));
    const spans = idx.update();
    const rows: SftRow[] = [];
    let skipped = 0;
    for (const span of spans.slice(offset, offset + limit)) {
      // valid JSON of the wrong shape (a hand-edited or foreign file) is skipped like a torn line
      try { rows.push(SftRowSchema.parse(readLineAt<SftRow>(idx.file, span))); } catch { skipped++; }
    }
    return { rows, total: spans.length, skipped };
  }

  datasetStats(): DatasetStats | null {
    const v = readJsonIfExists(path.join(this.dir, SFT_STATS));
    if (v === null) return null;
    const r = DatasetStatsSchema.safeParse(v);
    if (!r.success)
      throw new WorkbenchError(
        'CorruptData',
        `${SFT_STATS} does not match the expected shape: ${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}`,
        { where: SFT_STATS },
      );
    return r.data;
  }

  // ── evals ──
  evalResults(): EvalResult[] {
    const dir = path.join(this.dir, 'eval');
    if (!fs.existsSync(dir)) return [];
    const out: EvalResult[] = [];
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
      try {
        const file = path.join(dir, f);
        const result = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
        if (!result || typeof result !== 'object' || Array.isArray(result)) continue;
        out.push({
          id: f.slice(0, -5),
          stage: typeof result.stage === 'string' ? result.stage : null,
          step: typeof result.step === 'number' ? result.step : null,
          time: fs.statSync(file).mtimeMs,
          result,
        });
      } catch { /* a file being written or unreadable: skipped (reported by the UI as missing) */ }
    }
    return out;
  }
}
