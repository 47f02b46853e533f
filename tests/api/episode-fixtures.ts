// Real episodes without a model, for inspection tests: sessions on a real env played with
// well-formed random turns (or a corrupted observation), written to a run folder the way the
// engine's ctx.episode writes them (rollouts/<file>.jsonl plus the index with byte spans).
import * as path from 'node:path';
import type { EpisodeRecord, EpisodeSummary } from '../../core/api/records.js';
import { createEnv } from '../../core/envs/index.js';
import { Rng } from '../../core/util/rng.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { getTemplatePreset } from '../../core/prompts/template.js';
import { appendJsonl } from '../../core/storage/jsonl.js';

/** One episode; `garble` replaces the observation of every turn with text that parses to a wrong board. */
export function playEpisode(opts: { env?: string; seed: number; id: string; runId: string; stage: string; step: number; group: number; sample: number; rngSeed: number; garble?: boolean; word?: string }): EpisodeRecord {
  const session = new EpisodeSession(createEnv(opts.env ?? 'sokoban'), getTemplatePreset('spa'), { seed: opts.seed, maxTurns: 3 });
  const rng = new Rng(opts.rngSeed);
  while (!session.done) {
    let text = randomWellFormedResponse(session, rng);
    if (opts.garble) text = text.replace(/<observation>[\s\S]*?<\/observation>/, '<observation>\n#####\n</observation>');
    if (opts.word) text = text.replace('I will try', `${opts.word} I will try`);
    session.applyResponse(text);
  }
  return session.toEpisodeRecord({ id: opts.id, runId: opts.runId, stage: opts.stage, step: opts.step, group: opts.group, sample: opts.sample, time: 0 });
}

export function writeEpisodes(runDir: string, file: string, records: EpisodeRecord[]): EpisodeSummary[] {
  const rel = `rollouts/${file}.jsonl`;
  const spans = appendJsonl(path.join(runDir, rel), records);
  const summaries = records.map((r, i): EpisodeSummary => ({
    id: r.id, stage: r.stage, step: r.step, seed: r.seed, group: r.group, sample: r.sample, success: r.success, totalReward: r.totalReward,
    numTurns: r.numTurns, formatErrors: r.formatErrors, invalidActions: r.invalidActions, file: rel, offset: spans[i]!.offset, length: spans[i]!.length,
  }));
  appendJsonl(path.join(runDir, 'rollouts/index.jsonl'), summaries);
  return summaries;
}
