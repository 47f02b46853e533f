// The episode journal (core/train/episode-journal.ts): finished rollout batches survive a kill in the middle of a set of
// episodes. Checked here: playEpisodes restores a journalled batch instead of generating it and gives the results of an
// uninterrupted play; a journal of another model or setting, or a torn last line, is never mixed in; and the RL stage
// killed in the middle of a step's rollouts, or of step 0's tracked Pass@k, resumes from the finished batches to exactly
// the uninterrupted run's metrics, Pass@k files and weights, using the journalled episodes (a marked one shows up), and
// leaves no journal behind.
import { beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EpisodeRecord, TurnRecord } from '../../core/api/records.js';
import { RolloutSectionSchema, type RunConfigInput } from '../../core/api/run-config.js';
import type { StageContext } from '../../core/api/stage.js';
import { groupSpecs, playEpisodes, type RolloutResult, type SessionLike } from '../../core/train/rollout.js';
import { journalLimits, journalSummaries, modelFingerprint, openBatchJournal, type BatchJournal } from '../../core/train/episode-journal.js';
import { passAtKFile } from '../../core/train/rl-stage.js';
import { appendJsonl, readJsonl as readJsonlFile } from '../../core/storage/jsonl.js';
import { tempProject } from './helpers.js';
import { RL_RESUME_OVERRIDES, expectSameRun, runRl, weightHashes } from './rl-resume-helpers.js';

class Session implements SessionLike {
  replies: string[] = [];
  constructor(readonly length: number) {}
  messages() { return [{ role: 'user' as const, content: 'go' }]; }
  generationPrefix() { return ''; }
  applyResponse(text: string): TurnRecord { this.replies.push(text); return {} as TurnRecord; }
  get done() { return this.replies.length >= this.length; }
}

/** A context over a temp run folder with the journal's needs (the engine's own: core/engine/stage-context.ts). */
function journalContext(runDir: string, logs: string[] = []): Pick<StageContext, 'runDir' | 'stage' | 'readJsonl' | 'appendJsonl' | 'log'> {
  return {
    runDir, stage: 'rl',
    readJsonl: <T>(rel: string) => readJsonlFile<T>(join(runDir, rel)).rows,
    appendJsonl: (rel: string, rows: unknown[], opts?: { sync?: boolean }) => { appendJsonl(join(runDir, rel), rows, opts); },
    log: (_level: string, message: string) => { logs.push(message); },
  };
}

/** Six 2-turn episodes in batches of 2; the reply depends on the sampling seed, so a batch played with another seed differs. */
function play(journal?: BatchJournal, abortAfterBatches?: number) {
  const controller = new AbortController();
  let generated = 0, batches = 0;
  const specs = groupSpecs('rl-000000', 2_000_000, 0, 3, 2);
  const deps = {
    createSession: () => new Session(2),
    finish: (s: Session, spec: { id: string }) => ({ id: spec.id, replies: s.replies } as unknown as EpisodeRecord),
    policy: {
      encodePrompt: () => [1],
      generate: async (prompts: number[][], opts: { seed: number }) => {
        generated += prompts.length;
        return prompts.map((_p, i) => ({ ids: [opts.seed % 97, i], text: `r${opts.seed}-${i}`, logprobs: [-0.25 * i - 1 / 3] }));
      },
    },
    signal: controller.signal,
    onBatch: () => { if (++batches === abortAfterBatches) controller.abort(); },
    ...(journal ? { journal } : {}),
  };
  return playEpisodes(specs, { batchSize: 2 } as never, 11, deps).then((results) => ({ results, generated: () => generated }));
}

const plain = (rs: RolloutResult[]) => JSON.parse(JSON.stringify(rs)) as unknown;

describe('playEpisodes with an episode journal', () => {
  it('a stopped play resumes from its finished batches and gives the uninterrupted results', async () => {
    const reference = await play();
    expect(reference.results).toHaveLength(6);
    const runDir = tempProject('spa-journal-');
    const identity = { model: 'm', seed: 11 };
    const first = await play(openBatchJournal(journalContext(runDir), 'rollouts-000000', identity), 2);
    expect(first.results).toHaveLength(4);   // stopped after two of three batches
    const logs: string[] = [];
    const journal = openBatchJournal(journalContext(runDir, logs), 'rollouts-000000', identity);
    expect(journal.restored).toBe(2);
    const resumed = await play(journal);
    expect(resumed.generated()).toBe(2 * 2);   // only the last batch's 2 episodes x 2 turns were generated
    expect(plain(resumed.results)).toEqual(plain(reference.results));
    journal.clear();
    expect(existsSync(join(runDir, 'stages', 'rl', 'batches', 'rollouts-000000.jsonl'))).toBe(false);
  });

  it('a journal of another model or setting is discarded, never mixed in', async () => {
    const runDir = tempProject('spa-journal-');
    await play(openBatchJournal(journalContext(runDir), 'k', { model: 'a' }), 1);
    const logs: string[] = [];
    const other = openBatchJournal(journalContext(runDir, logs), 'k', { model: 'b' });
    expect(other.restored).toBe(0);
    expect(logs.join('\n')).toMatch(/belongs to another model or setting; it is discarded/);
    const again = await play(other);
    expect(again.generated()).toBe(6 * 2);
    expect(openBatchJournal(journalContext(runDir), 'k', { model: 'a' }).restored).toBe(0);   // the old journal is gone
  });

  it('a journal written before rollout.history existed belongs to the same play under its default (text), not under tokens', () => {
    const before = { maxNewTokens: 48, maxContextTokens: 2048, temperature: 1, topP: 1, topK: 0, batchSize: 8 };   // a run.json of 93c91b7
    const now = RolloutSectionSchema.parse(before);
    expect(now.history).toBe('text');
    expect(JSON.stringify(journalLimits(now))).toBe(JSON.stringify(before));
    expect(journalLimits({ ...now, history: 'tokens' })).toEqual({ ...before, history: 'tokens' });
  });

  it('a torn last line (a kill during the write) is skipped: that batch is played again', async () => {
    const runDir = tempProject('spa-journal-');
    await play(openBatchJournal(journalContext(runDir), 'k', { model: 'a' }), 2);
    appendFileSync(join(runDir, 'stages', 'rl', 'batches', 'k.jsonl'), '{"start":4,"results":[{"spec"');
    const journal = openBatchJournal(journalContext(runDir), 'k', { model: 'a' });
    expect(journal.restored).toBe(2);
    expect((await play(journal)).generated()).toBe(4);
  });

  it('journalSummaries says what a run keeps for a resume (spa-workbench show), a torn line not counted', async () => {
    const runDir = tempProject('spa-journal-');
    expect(journalSummaries(runDir)).toEqual([]);
    await play(openBatchJournal(journalContext(runDir), 'rollouts-000003', { model: 'a' }), 2);
    appendFileSync(join(runDir, 'stages', 'rl', 'batches', 'rollouts-000003.jsonl'), '{"start":4,"results":[{"spec"');
    expect(journalSummaries(runDir)).toEqual([{ stage: 'rl', key: 'rollouts-000003', batches: 2, items: 4, unit: 'episodes' }]);
  });

  it('refuses a key that is not a file name part', () => {
    expect(() => openBatchJournal(journalContext(tempProject('spa-journal-')), '../x', {})).toThrow(/episode journal key/);
  });

  it('fingerprints a checkpoint by its manifest: rewritten weights change it, a moved folder keeps it', () => {
    const root = tempProject('spa-journal-');
    const dir = join(root, 'ckpt');
    mkdirSync(dir, { recursive: true });
    expect(modelFingerprint(dir)).toBe(dir);
    const manifest = (sha: string, parent: string) => JSON.stringify({ parent, step: 3, stage: 'rl', weights: { sha256: sha } });
    writeFileSync(join(dir, 'manifest.json'), manifest('aa', '/old/place/smollm2'));
    const a = modelFingerprint(dir);
    expect(a).not.toBe(dir);
    writeFileSync(join(dir, 'manifest.json'), manifest('ab', '/old/place/smollm2'));
    expect(modelFingerprint(dir)).not.toBe(a);
    // the same checkpoint in another folder, trained from the same model imported at another path: the same identity
    const moved = join(root, 'elsewhere', 'ckpt');
    mkdirSync(moved, { recursive: true });
    writeFileSync(join(moved, 'manifest.json'), manifest('aa', '/new/place/smollm2'));
    expect(modelFingerprint(moved)).toBe(a);
    // an unparsable manifest: its bytes and the path
    writeFileSync(join(moved, 'manifest.json'), '{"weights":');
    expect(modelFingerprint(moved).startsWith(`${moved}#`)).toBe(true);
  });

  it('fingerprints an imported model folder (no manifest) by its config and weights, wherever it lies', () => {
    const root = tempProject('spa-journal-');
    const write = (dir: string, weights: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'config.json'), '{"model_type":"llama"}');
      writeFileSync(join(dir, 'model.safetensors'), weights);
    };
    write(join(root, 'a'), 'weights-1');
    write(join(root, 'b'), 'weights-1');
    const a = modelFingerprint(join(root, 'a'));
    expect(a.startsWith('model#')).toBe(true);
    expect(modelFingerprint(join(root, 'b'))).toBe(a);
    writeFileSync(join(root, 'b', 'model.safetensors'), 'weights-2');
    expect(modelFingerprint(join(root, 'b'))).not.toBe(a);
  });
});

describe('the RL stage resumes from its episode journal', () => {
  // two episodes a step (1 puzzle x 2), played one per batch: a kill after the first batch leaves one journalled
  const overrides: RunConfigInput = {
    ...RL_RESUME_OVERRIDES,
    stages: { ...RL_RESUME_OVERRIDES.stages, rollout: { batchSize: 1 } },
  } as RunConfigInput;
  let reference = '';
  let referenceWeights: Record<string, string> = {};
  beforeAll(async () => {
    const run = await runRl(tempProject('spa-journal-rl-'), 'ref', overrides);
    expect(run.outcome.status).toBe('completed');
    reference = run.runDir;
    referenceWeights = await weightHashes(reference);
  }, 240_000);

  const restoredLog = (events: Awaited<ReturnType<typeof runRl>>['events'], pattern: RegExp) =>
    events.some((e) => e.type === 'log' && pattern.test(e.message));
  // what a finished stage leaves of its journals: nothing, not even the folder
  const journals = (runDir: string) => {
    const dir = join(runDir, 'stages', 'rl', 'batches');
    return existsSync(dir) ? readdirSync(dir).concat('(the folder)') : [];
  };

  it('a kill after the first rollout batch of step 2: the resume plays only the second and is exact', async () => {
    const project = tempProject('spa-journal-rl-');
    const file = 'stages/rl/batches/rollouts-000001.jsonl';
    const first = await runRl(project, 'r', overrides, { kill: { after: 'appendJsonl', file, appends: 2 } });   // header + batch 0
    expect(first.outcome.status).toBe('failed');
    const lines = readFileSync(join(first.runDir, file), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    // mark the journalled episode (a field training does not read), so the resumed rollouts show whether it was replayed
    const batch = JSON.parse(lines[1]!) as { results: Array<{ record: { runId: string } }> };
    batch.results[0]!.record.runId = 'from-the-journal';
    writeFileSync(join(first.runDir, file), `${lines[0]}\n${JSON.stringify(batch)}\n`);
    const second = await runRl(project, 'r', overrides);
    expect(second.outcome.status).toBe('completed');
    expect(restoredLog(second.events, /rl: step 2: 1 finished rollout batch\(es\) restored from its episode journal/)).toBe(true);
    const step2 = readFileSync(join(second.runDir, 'rollouts', 'rl-000001.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { runId: string });
    expect(step2.map((e) => e.runId)).toEqual(['from-the-journal', 'r']);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
    expect(journals(second.runDir)).toEqual([]);
  }, 240_000);

  it('a project moved to another folder after the kill (another disk or machine) keeps its journal: the resume is exact', async () => {
    const project = tempProject('spa-journal-rl-');
    const file = 'stages/rl/batches/rollouts-000001.jsonl';
    const first = await runRl(project, 'r', overrides, { kill: { after: 'appendJsonl', file, appends: 2 } });
    expect(first.outcome.status).toBe('failed');
    const moved = join(tempProject('spa-journal-rl-moved-'), 'project');
    cpSync(project, moved, { recursive: true });
    rmSync(project, { recursive: true, force: true });
    const second = await runRl(moved, 'r', overrides);
    expect(second.outcome.status).toBe('completed');
    expect(restoredLog(second.events, /rl: step 2: 1 finished rollout batch\(es\) restored from its episode journal/)).toBe(true);
    expect(restoredLog(second.events, /belongs to another model or setting/)).toBe(false);
    expectSameRun(second.runDir, reference);
    expect(await weightHashes(second.runDir)).toEqual(referenceWeights);
  }, 240_000);

  it("a kill during step 0's tracked Pass@k: the resume restores its finished batch and is exact", async () => {
    const project = tempProject('spa-journal-rl-');
    const file = 'stages/rl/batches/pass-at-k-000000.jsonl';
    const first = await runRl(project, 'r', overrides, { kill: { after: 'appendJsonl', file, appends: 2 } });
    expect(first.outcome.status).toBe('failed');
    expect(existsSync(join(first.runDir, passAtKFile(0)))).toBe(false);
    // flip the journalled episode's success: the resumed Pass@k counts it only if it read the journal instead of replaying
    const lines = readFileSync(join(first.runDir, file), 'utf8').trim().split('\n');
    const batch = JSON.parse(lines[1]!) as { results: Array<{ record: { success: boolean } }> };
    const was = batch.results[0]!.record.success;
    batch.results[0]!.record.success = !was;
    writeFileSync(join(first.runDir, file), `${lines[0]}\n${JSON.stringify(batch)}\n`);
    const second = await runRl(project, 'r', overrides);
    expect(second.outcome.status).toBe('completed');
    expect(restoredLog(second.events, /rl: 1 finished batch\(es\) of this evaluation restored/)).toBe(true);
    const successes = (runDir: string) => (JSON.parse(readFileSync(join(runDir, passAtKFile(0)), 'utf8')) as { perPuzzle: Array<{ c: number }> }).perPuzzle[0]!.c;
    expect(successes(second.runDir)).toBe(successes(reference) + (was ? -1 : 1));
    expect(journals(second.runDir)).toEqual([]);
  }, 240_000);

  it("a step-0 Pass@k written by an earlier attempt is kept, not recomputed", async () => {
    const project = tempProject('spa-journal-rl-');
    // killed after step 1's first rollout batch: step 0's Pass@k is written, no step is saved
    const first = await runRl(project, 'r', overrides, { kill: { after: 'appendJsonl', file: 'stages/rl/batches/rollouts-000000.jsonl', appends: 2 } });
    expect(first.outcome.status).toBe('failed');
    const before = readFileSync(join(first.runDir, passAtKFile(0)), 'utf8');
    const second = await runRl(project, 'r', overrides);
    expect(second.outcome.status).toBe('completed');
    expect(restoredLog(second.events, /the Pass@k of step 0 was computed by an earlier attempt; kept/)).toBe(true);
    expect(readFileSync(join(second.runDir, passAtKFile(0)), 'utf8')).toBe(before);
    expectSameRun(second.runDir, reference);
  }, 240_000);
});
