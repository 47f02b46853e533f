// Host-side trace inspection beyond the rollout index (issue 12, item 5): sort by any column,
// one PPO group, full-text search in responses and a filter on the episode's world-model accuracy.
// Search and the accuracy need the episode lines themselves: they are read one episode at a time
// (by byte span from the index), only for rows that pass the index filters, and the accuracy is
// cached per episode line (episodes are immutable; a superseded one has another offset). Also the
// per-step histograms of the per-token statistics that RL episodes store (item 11).
import type { EpisodeRecord, EpisodeSummary, TurnRecord } from '../api/records.js';
import type { ApiRequestParsed, ApiResponse, Histogram, RolloutSortKey, TokenField } from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import { readLineAt } from '../storage/jsonl.js';
import { insideRun } from '../storage/run-files.js';
import type { RunData } from '../storage/run-data.js';

type Query = ApiRequestParsed<'rollouts.query'>;
interface Derived { wm: number | null }

const derivedCache = new WeakMap<RunData, Map<string, Derived>>();

function readEpisode(data: RunData, s: EpisodeSummary): EpisodeRecord {
  const file = insideRun(data.dir, s.file, 'rollout index file');
  try {
    return readLineAt<EpisodeRecord>(file, { offset: s.offset, length: s.length });
  } catch (err) {
    throw new WorkbenchError('CorruptData', `episode ${s.id}: could not read ${s.file} at byte ${s.offset} (${(err as Error).message})`, { where: s.file });
  }
}

/**
 * Mean world-model cell accuracy of an episode: over every scored observation and prediction of
 * its turns, an unparseable one counting 0 (as the RL metrics count it); null when nothing was
 * scored (plain response format, or no turns).
 */
export function episodeWmAccuracy(turns: readonly Pick<TurnRecord, 'wm'>[]): number | null {
  let sum = 0;
  let n = 0;
  for (const t of turns) {
    for (const score of [t.wm?.observation, t.wm?.prediction]) {
      if (!score) continue;
      sum += score.parsed ? score.cellAccuracy : 0;
      n++;
    }
  }
  return n === 0 ? null : sum / n;
}

function derived(data: RunData, s: EpisodeSummary, episode?: EpisodeRecord): Derived {
  let cache = derivedCache.get(data);
  if (!cache) derivedCache.set(data, (cache = new Map()));
  const key = `${s.file}:${s.offset}`;
  let d = cache.get(key);
  if (!d) cache.set(key, (d = { wm: episodeWmAccuracy((episode ?? readEpisode(data, s)).turns ?? []) }));
  return d;
}

function sortValue(e: EpisodeSummary, key: RolloutSortKey, wm: (e: EpisodeSummary) => number | null): number | string {
  switch (key) {
    case 'id': return e.id;
    case 'step': return e.step;
    case 'seed': return e.seed;
    case 'group': return e.group;
    case 'sample': return e.sample;
    case 'success': return e.success ? 1 : 0;
    case 'reward': return e.totalReward;
    case 'turns': return e.numTurns;
    case 'formatErrors': return e.formatErrors;
    case 'invalidActions': return e.invalidActions;
    case 'wm': return wm(e) ?? Number.NEGATIVE_INFINITY;   // nothing scored sorts below 0 %
    case 'index': return 0;
  }
}

/** rollouts.query with every filter of the contract; each returned row carries its wmAccuracy. */
export function queryRolloutsInspect(data: RunData, q: Query): ApiResponse<'rollouts.query'> {
  let rows = data.summaries().filter((e) =>
    (q.stage === undefined || e.stage === q.stage)
    && (q.step === undefined || e.step === q.step)
    && (q.stepMin === undefined || e.step >= q.stepMin)
    && (q.stepMax === undefined || e.step <= q.stepMax)
    && (q.group === undefined || e.group === q.group)
    && (q.outcome === 'all' || (q.outcome === 'success') === e.success)
    && (q.seed === undefined || e.seed === q.seed)
    && (q.formatErrors === 'any' || (q.formatErrors === 'some') === (e.formatErrors > 0)));
  const wmOf = (e: EpisodeSummary): number | null => derived(data, e).wm;
  if (q.search !== undefined) {
    const needle = q.search.toLowerCase();
    rows = rows.filter((e) => {
      const episode = readEpisode(data, e);
      derived(data, e, episode);
      return (episode.turns ?? []).some((t) => typeof t.response === 'string' && t.response.toLowerCase().includes(needle));
    });
  }
  if (q.wmMin !== undefined || q.wmMax !== undefined) {
    rows = rows.filter((e) => {
      const wm = wmOf(e);
      return wm !== null && (q.wmMin === undefined || wm >= q.wmMin - 1e-9) && (q.wmMax === undefined || wm <= q.wmMax + 1e-9);
    });
  }
  const key: RolloutSortKey | null = q.sortBy ?? (q.sort === 'index' ? null : 'reward');
  const desc = q.sortBy ? q.order === 'desc' : q.sort === 'reward-desc';
  if (key && key !== 'index') {
    const sign = desc ? -1 : 1;
    const values = new Map(rows.map((e) => [e, sortValue(e, key, wmOf)]));
    rows = rows.map((e, i) => ({ e, i })).sort((a, b) => {
      const x = values.get(a.e)!, y = values.get(b.e)!;
      const c = typeof x === 'string' || typeof y === 'string' ? String(x).localeCompare(String(y)) : x - y;
      return c !== 0 ? sign * c : a.i - b.i;
    }).map((r) => r.e);
  } else if (key === 'index' && desc) {
    rows = [...rows].reverse();
  }
  const page = rows.slice(q.offset, q.offset + q.limit).map((e) => ({ ...e, wmAccuracy: wmOf(e) }));
  return { episodes: page, total: rows.length };
}

// ───────────────────────── token histograms ─────────────────────────

function histogram(xs: number[], lo: number, hi: number, bins: number): Histogram {
  const counts = new Array<number>(bins).fill(0);
  const width = hi > lo ? (hi - lo) / bins : 1;
  let sum = 0, min = Infinity, max = -Infinity;
  for (const x of xs) {
    const b = hi > lo ? Math.min(bins - 1, Math.max(0, Math.floor((x - lo) / width))) : Math.floor(bins / 2);
    counts[b]!++;
    sum += x; min = Math.min(min, x); max = Math.max(max, x);
  }
  const edges = Array.from({ length: bins + 1 }, (_, i) => (hi > lo ? lo + i * width : lo - 0.5 + i / bins));
  return { edges, counts, count: xs.length, mean: xs.length ? sum / xs.length : 0, min: xs.length ? min : 0, max: xs.length ? max : 0 };
}

/** Histograms per step of the stored per-token statistics, with one range per field across all steps. */
export function tokenHistograms(data: RunData, q: ApiRequestParsed<'inspect.tokenHistograms'>): ApiResponse<'inspect.tokenHistograms'> {
  const byStep = new Map<number, { episodes: number; values: Record<string, number[]> }>();
  for (const s of data.summaries()) {
    if (s.stage !== q.stage) continue;
    const episode = readEpisode(data, s);
    let entry = byStep.get(s.step);
    for (const turn of episode.turns ?? []) {
      const stats = turn.tokenStats;
      if (!stats) continue;
      if (!entry) byStep.set(s.step, (entry = { episodes: 0, values: {} }));
      for (const field of q.fields) {
        const xs = stats[field as TokenField];
        if (!xs) continue;
        (entry.values[field] ??= []).push(...xs.filter((x) => Number.isFinite(x)));
      }
    }
    if (entry) entry.episodes++;
  }
  const range: Record<string, [number, number] | null> = {};
  for (const field of q.fields) {
    let lo = Infinity, hi = -Infinity;
    for (const e of byStep.values()) for (const x of e.values[field] ?? []) { if (x < lo) lo = x; if (x > hi) hi = x; }
    range[field] = Number.isFinite(lo) ? [lo, hi] : null;
  }
  const steps = [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, e]) => ({
    step, episodes: e.episodes,
    histograms: Object.fromEntries(q.fields.map((f) => {
      const xs = e.values[f];
      const r = range[f];
      return [f, xs && xs.length && r ? histogram(xs, r[0], r[1], q.bins) : null];
    })),
  }));
  return { steps, range };
}

