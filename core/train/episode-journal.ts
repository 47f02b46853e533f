// The episode journal: finished rollout batches kept on disk while a stage plays a long set of episodes, so a run stopped
// (or killed) in the middle of an RL step's rollouts, a tracked Pass@k or the eval resumes from its last finished batch
// instead of replaying the whole set. On a 2-core CPU one batch of a real model's episodes takes minutes and a set of them
// hours (docs/results/study-v4): without it a run whose session ends every few hours never finishes a step.
//
// Exactness: playEpisodes samples each batch with its own seed (seed + start × 7919, core/train/rollout.ts) from the model
// of the set, so a batch replayed from the same model and settings is the batch the journal holds. The journal is tied to
// a fingerprint (the model's checkpoint manifest, the set's episode ids, sampling seed and limits): a journal of another
// model or setting is discarded, never mixed in. It lives in <run>/stages/<stage>/batches/<key>.jsonl and is removed when
// its set is done (the stage's state or result then holds what it was for).
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RolloutSection } from '../api/run-config.js';
import type { StageContext } from '../api/stage.js';
import type { EpisodeSpec, RolloutResult } from './rollout.js';

/**
 * Where playEpisodes keeps and finds finished batches (RolloutDeps.journal); T is one item of a batch (an episode's result,
 * or one row's old log-probs in RL's stats journal: core/train/ppo.ts samplingStats).
 */
export interface BatchJournal<T = RolloutResult> {
  /** The batch that starts at item `start` of the set, when a previous attempt finished it; else null. */
  load(start: number): T[] | null;
  /** Keep a finished batch (appended and fsynced: a kill after this returns does not lose it). */
  save(start: number, results: readonly T[]): void;
  /** Remove the journal: its set is done. */
  clear(): void;
  /** Batches restored from a previous attempt (for the stage's log). */
  readonly restored: number;
}

interface JournalLine<T = unknown> { fingerprint?: string; start?: number; results?: T[] }

/**
 * The identity of the weights a set is played with, by content only, so that a project folder moved or copied elsewhere
 * (another disk, another machine: docs/results/study-v4/carry.sh) keeps its journals:
 * - a checkpoint folder: its manifest.json (the sha256 of its weights and files, step, stage, creation time) without `parent`,
 *   the absolute path of the model it was trained from (core/model/checkpoint.ts);
 * - a model folder without a manifest (`model import`'s output): the sha256 of its config.json and model.safetensors, cached
 *   per path, size and modification time (hashing 0.5 GB takes seconds on a 2-core CPU);
 * - anything else (a preset or a seeded initialisation), or an unreadable folder: the reference string itself.
 * Errors: none (an unreadable manifest falls back to its bytes and the path, which only makes a journal less reusable).
 */
export function modelFingerprint(from: string): string {
  const manifest = join(from, 'manifest.json');
  try {
    if (existsSync(manifest)) {
      const bytes = readFileSync(manifest);
      let parsed: unknown = null;
      try { parsed = JSON.parse(bytes.toString('utf8')); } catch { /* hashed as bytes below */ }
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const { parent: _parent, ...content } = parsed as Record<string, unknown>;
        return `checkpoint#${createHash('sha256').update(JSON.stringify(content)).digest('hex')}`;
      }
      return `${from}#${createHash('sha256').update(bytes).digest('hex')}`;
    }
    const config = join(from, 'config.json');
    const weights = join(from, 'model.safetensors');
    if (existsSync(config) && existsSync(weights)) return `model#${fileSha256(config)}#${fileSha256(weights)}`;
  } catch { /* the path alone */ }
  return from;
}

const fileHashes = new Map<string, { key: string; sha256: string }>();

/** The sha256 of a file, read in 4 MiB chunks (no 0.5 GB buffer), cached per path while its size and mtime stay. */
function fileSha256(file: string): string {
  const st = statSync(file);
  const key = `${st.size}:${st.mtimeMs}`;
  const cached = fileHashes.get(file);
  if (cached?.key === key) return cached.sha256;
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(4 << 20);
  const fd = openSync(file, 'r');
  try {
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) hash.update(buf.subarray(0, n));
  } finally { closeSync(fd); }
  const sha256 = hash.digest('hex');
  fileHashes.set(file, { key, sha256 });
  return sha256;
}

/**
 * Open (or start) the journal `key` of the current stage, for the set described by `identity` (anything JSON: the model's
 * fingerprint, the episode ids, seed and limits). A journal whose fingerprint differs is deleted and started again, with
 * a log line saying so. `key`: a file name part (letters, digits, `-`, `_`, `.`); anything else throws.
 */
export function openBatchJournal<T = RolloutResult>(ctx: Pick<StageContext, 'runDir' | 'stage' | 'readJsonl' | 'appendJsonl' | 'log'>,
  key: string, identity: unknown): BatchJournal<T> & { readonly fingerprint: string } {
  if (!/^[\w.-]+$/.test(key)) throw new Error(`episode journal key "${key}": use letters, digits, '-', '_' or '.'`);
  const rel = `stages/${ctx.stage}/batches/${key}.jsonl`;
  const file = join(ctx.runDir, rel);
  const fingerprint = createHash('sha256').update(JSON.stringify(identity)).digest('hex');
  const batches = new Map<number, T[]>();
  if (existsSync(file)) {
    const lines = ctx.readJsonl<JournalLine<T>>(rel);
    if (lines[0]?.fingerprint === fingerprint) {
      for (const line of lines.slice(1)) if (typeof line.start === 'number' && Array.isArray(line.results)) batches.set(line.start, line.results);
    } else {
      ctx.log('info', `episode journal ${rel} belongs to another model or setting; it is discarded`);
      rmSync(file, { force: true });
    }
  }
  let started = existsSync(file);
  const restored = batches.size;
  return {
    restored,
    fingerprint,
    load(start) { return batches.get(start) ?? null; },
    save(start, results) {
      if (!started) { ctx.appendJsonl(rel, [{ fingerprint, key }], { sync: true }); started = true; }
      ctx.appendJsonl(rel, [{ start, results }], { sync: true });
    },
    clear() {
      rmSync(file, { force: true });
      batches.clear();
      started = false;
      try { rmdirSync(dirname(file)); } catch { /* other journals still there, or none made */ }
    },
  };
}

/**
 * The rollout limits as a journal's identity holds them: a field added to the rollout section since journals were first
 * written is left out while it has the value that reproduces the play from before it existed (rollout.history 'text'), so a
 * run resumed on a newer version keeps the batches it had journalled; any other value is part of the identity.
 */
export function journalLimits(limits: RolloutSection): Omit<RolloutSection, 'history'> & Partial<Pick<RolloutSection, 'history'>> {
  if (limits.history !== 'text' && limits.history !== undefined) return limits;
  const { history: _history, ...rest } = limits;
  return rest;
}

/**
 * The journal of one set of episodes played from the checkpoint `model` (its manifest: modelFingerprint) with `specs`,
 * sampling `seed` and `limits` under the run's template and env: the identity every caller ties a journal to. Logs
 * `restoredLine(n)` when a previous attempt left n finished batches.
 */
export function openEpisodeJournal(ctx: Pick<StageContext, 'runDir' | 'stage' | 'readJsonl' | 'appendJsonl' | 'log' | 'config'>, key: string,
  restoredLine: (n: number) => string, model: string, specs: readonly EpisodeSpec[], seed: number, limits: RolloutSection): BatchJournal {
  const journal = openBatchJournal(ctx, key, {
    model: modelFingerprint(model), ids: specs.map((s) => s.id), seeds: specs.map((s) => s.seed), seed, limits: journalLimits(limits),
    template: ctx.config.template, env: ctx.config.env,
  });
  if (journal.restored) ctx.log('info', restoredLine(journal.restored));
  return journal;
}

/**
 * One journal of a run, for `spa-workbench show`: the stage, its key, the finished batches and the items they hold: episodes,
 * or rows of old log-probs (an RL step's stats journal, keys `old-logprobs-<step>`: core/train/rl-stage.ts).
 */
export interface JournalSummary { stage: string; key: string; batches: number; items: number; unit: 'episodes' | 'rows' }

/** The key prefix of an RL step's stats journal (its old log-probs, values and entropies, per batch of rows). */
export const STATS_JOURNAL_PREFIX = 'old-logprobs-';

/**
 * What one journal file holds: its fingerprint (null when its first line is not a header) and the starts of its finished
 * batches (a torn last line not counted). Null when the file does not exist. Errors: none (an unreadable file is null).
 */
export function readJournalFile(file: string): { fingerprint: string | null; starts: number[]; items: number } | null {
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch { return null; }
  const lines = text.split('\n');
  let fingerprint: string | null = null;
  try { fingerprint = (JSON.parse(lines[0] ?? '') as JournalLine).fingerprint ?? null; } catch { /* no header */ }
  const starts: number[] = [];
  let items = 0;
  for (const line of lines.slice(1)) {
    if (!line.trim()) continue;
    try {
      const parsed = JSON.parse(line) as JournalLine;
      if (typeof parsed.start === 'number' && Array.isArray(parsed.results)) { starts.push(parsed.start); items += parsed.results.length; }
    } catch { /* a torn last line */ }
  }
  return { fingerprint, starts, items };
}

/**
 * The journals a run holds now (<runDir>/stages/<stage>/batches/<key>.jsonl): what a resume will not play or score again.
 * Empty when none (a finished run has none). A line that does not parse (a torn last line) is not counted.
 */
export function journalSummaries(runDir: string): JournalSummary[] {
  const out: JournalSummary[] = [];
  const stagesDir = join(runDir, 'stages');
  let stages: string[] = [];
  try { stages = readdirSync(stagesDir); } catch { return out; }
  for (const stage of stages.sort()) {
    let files: string[] = [];
    try { files = readdirSync(join(stagesDir, stage, 'batches')).filter((f) => f.endsWith('.jsonl')).sort(); } catch { continue; }
    for (const f of files) {
      const read = readJournalFile(join(stagesDir, stage, 'batches', f));
      if (!read) continue;
      const key = f.slice(0, -'.jsonl'.length);
      out.push({ stage, key, batches: read.starts.length, items: read.items, unit: key.startsWith(STATS_JOURNAL_PREFIX) ? 'rows' : 'episodes' });
    }
  }
  return out;
}
