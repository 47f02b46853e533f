// rollouts.query's inspection filters (issue 12, item 5) on real episodes: sort by any column,
// one group, full-text search in responses, world-model accuracy bounds; the run's own template
// (item 6); token histograms per RL step and system samples (item 11).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkbenchClient } from '../../core/api/contract.js';
import type { EpisodeRecord } from '../../core/api/records.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { episodeWmAccuracy } from '../../core/host/rollout-inspect.js';
import { appendSystemSample } from '../../core/storage/system-samples.js';
import { parseNvidiaSmi } from '../../core/engine/system-sampler.js';
import { attachTokenStats } from '../../core/train/token-stats.js';
import { TOKEN_STATS_MAX } from '../../core/api/records.js';
import { isolateHome, tempDir } from './helpers.js';
import { playEpisode, writeEpisodes } from './episode-fixtures.js';

let d: Dispatcher;
let api: WorkbenchClient;
let runId: string;
let runDir: string;
let records: EpisodeRecord[];

beforeAll(async () => {
  isolateHome();
  d = createDispatcher({ host: 'in-process' });
  api = createInProcessClient(d);
  await api.projects.create({ path: tempDir('spa-wb-inspect-') });
  const run = await api.runs.create({ preset: 'spa', size: 'smoke', config: { env: { id: 'sokoban' } } });
  runId = run.id;
  runDir = run.dir;
  // 2 steps × 2 groups × 3 samples; sample 2 of every group has garbled observations; group 1 of step 1 says "needle"
  records = [];
  for (let step = 0; step < 2; step++) for (let g = 0; g < 2; g++) for (let s = 0; s < 3; s++) {
    const group = step * 2 + g;
    records.push(playEpisode({ seed: 100 + group, id: `rl-${step}-g${group}-s${s}`, runId, stage: 'rl', step, group, sample: s, rngSeed: group * 10 + s, garble: s === 2, ...(group === 3 ? { word: 'NeedleWord' } : {}) }));
  }
  writeEpisodes(runDir, 'rl', records);
});

afterAll(async () => { await d.dispose({ kill: true }); });

describe('rollouts.query inspection filters', () => {
  it('one PPO group: the samples of that group only, each with its world-model accuracy', async () => {
    const r = await api.rollouts.query({ runId, group: 2 });
    expect(r.episodes.map((e) => e.id)).toEqual(['rl-1-g2-s0', 'rl-1-g2-s1', 'rl-1-g2-s2']);
    for (const e of r.episodes) expect(e.wmAccuracy).toBeCloseTo(episodeWmAccuracy(records.find((x) => x.id === e.id)!.turns)!, 9);
  });

  it('full-text search in responses, case-insensitive', async () => {
    const r = await api.rollouts.query({ runId, search: 'needleword' });
    expect(r.total).toBe(3);
    expect(r.episodes.every((e) => e.group === 3)).toBe(true);
  });

  it('world-model accuracy bounds pick the garbled samples apart from the well-formed ones', async () => {
    const low = await api.rollouts.query({ runId, wmMax: 0.9 });
    const high = await api.rollouts.query({ runId, wmMin: 0.9 });
    expect(low.episodes.map((e) => e.sample).every((s) => s === 2)).toBe(true);
    expect(low.total).toBe(4);
    expect(high.total).toBe(8);
    expect(high.episodes.every((e) => (e.wmAccuracy ?? 0) >= 0.9)).toBe(true);
  });

  it('sort by any column, both ways, with a step range', async () => {
    const byWm = await api.rollouts.query({ runId, sortBy: 'wm', order: 'asc' });
    const wms = byWm.episodes.map((e) => e.wmAccuracy!);
    expect(wms).toEqual([...wms].sort((a, b) => a - b));
    const bySeedDesc = await api.rollouts.query({ runId, sortBy: 'seed', order: 'desc', stepMin: 1, stepMax: 1 });
    expect(bySeedDesc.total).toBe(6);
    expect(bySeedDesc.episodes.map((e) => e.seed)).toEqual([103, 103, 103, 102, 102, 102]);
    const byId = await api.rollouts.query({ runId, sortBy: 'id', order: 'desc', limit: 2 });
    expect(byId.episodes.map((e) => e.id)).toEqual(['rl-1-g3-s2', 'rl-1-g3-s1']);
  });

  it('rejects bad bounds and unknown sort columns', async () => {
    await expect(api.rollouts.query({ runId, wmMin: 2 })).rejects.toMatchObject({ name: 'ValidationError' });
    await expect(api.rollouts.query({ runId, sortBy: 'nope' as never })).rejects.toMatchObject({ name: 'ValidationError' });
  });
});

describe('inspect.runTemplate', () => {
  it('is the pinned template.json with its hash, equal to the run summary\'s', async () => {
    const t = await api.inspect.runTemplate({ runId });
    expect(t.pinned).toBe(true);
    expect(t.hash).toBe(t.recordedHash);
    expect(JSON.parse(t.source)).toEqual(JSON.parse(fs.readFileSync(path.join(runDir, 'template.json'), 'utf8')));
    expect(t.name).not.toBe('raw-grid');
  });
});

describe('per-token statistics', () => {
  it('are bounded per turn, aligned with the response, and histogrammed per step with shared bins', async () => {
    const episode = playEpisode({ seed: 5, id: 'rl-2-g9-s0', runId, stage: 'rl', step: 2, group: 9, sample: 0, rngSeed: 1 });
    const n = TOKEN_STATS_MAX + 8;
    const ids = [...Array.from({ length: 4 }, (_, i) => i), ...Array.from({ length: n }, (_, i) => 10 + i)];
    const per = ids.map((_, i) => -i / 1000);
    attachTokenStats([episode], [{ episode: 0, turn: 0, ids, responseStart: 4 }], { logprobs: [per], entropies: [per.map((x) => -x)], values: null, advantages: [per.map(() => 0.5)] }, (id) => `t${id}`);
    const stats = episode.turns[0]!.tokenStats!;
    expect(stats.tokens).toHaveLength(TOKEN_STATS_MAX);
    expect(stats.dropped).toBe(8);
    expect(stats.tokens[0]).toBe('t10');
    expect(stats.logprobs[0]).toBe(-0.004);
    expect(stats.values).toBeNull();
    writeEpisodes(runDir, 'rl-tokens', [episode]);
    const h = await api.inspect.tokenHistograms({ runId, fields: ['advantages', 'logprobs'], bins: 4 });
    expect(h.steps.map((s) => s.step)).toEqual([2]);
    const adv = h.steps[0]!.histograms.advantages!;
    expect(adv.count).toBe(TOKEN_STATS_MAX);
    expect(adv.counts.reduce((a, c) => a + c, 0)).toBe(TOKEN_STATS_MAX);
    const lp = h.steps[0]!.histograms.logprobs!;
    expect(lp.counts.reduce((a, c) => a + c, 0)).toBe(TOKEN_STATS_MAX);
    expect(h.range.logprobs![0]).toBeCloseTo(-(TOKEN_STATS_MAX + 3) / 1000, 6);
    const full = await api.rollouts.get({ runId, id: 'rl-2-g9-s0' });
    expect(full.turns[0]!.tokenStats!.tokens).toHaveLength(TOKEN_STATS_MAX);
    expect(full.system).toBeTruthy();
  });
});

describe('system samples', () => {
  it('are read back in time order and thinned to maxPoints', async () => {
    for (let i = 0; i < 10; i++) {
      appendSystemSample(runDir, { time: 1000 + (9 - i) * 10, stage: 'rl', cpuPercent: i, rssMb: 100, heapMb: 50, memUsedMb: 1000, memTotalMb: 2000, loadAvg: 1 });
    }
    const all = await api.inspect.systemMetrics({ runId });
    expect(all.total).toBe(10);
    expect(all.samples.map((s) => s.time)).toEqual([...all.samples.map((s) => s.time)].sort((a, b) => a - b));
    const thin = await api.inspect.systemMetrics({ runId, maxPoints: 4 });
    expect(thin.samples).toHaveLength(4);
    expect(thin.samples[3]!.time).toBe(1090);
  });

  it('parses nvidia-smi', () => {
    expect(parseNvidiaSmi('37, 1024, 81559\n12, 0, 81559\n')).toEqual({ gpuPercent: 37, gpuMemMb: 1024, gpuMemTotalMb: 81559 });
    expect(parseNvidiaSmi('')).toBeNull();
    expect(parseNvidiaSmi('[N/A], 1, 2')).toBeNull();
  });
});
