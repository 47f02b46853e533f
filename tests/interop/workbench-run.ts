// Test helper: a real workbench run folder without a model — SPA self-play with the workbench's
// random well-formed writer (the `selfplay.policy: random` ablation) on the real env, template and
// SFT-row builder, written where the pipeline writes them. Also the RAGEN-history conversion of
// its episodes used by the round-trip test, and a Python runner.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { EpisodeRecord, EpisodeSummary } from '../../core/api/records.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { playEpisodes, groupSpecs } from '../../core/train/rollout.js';
import { rolloutDeps, sessionFactory, runTemplate } from '../../core/train/episodes.js';
import { buildSftRows } from '../../core/train/selfplay-data.js';
import type { ModelRuntime } from '../../core/train/runtime.js';
import { RolloutSectionSchema } from '../../core/api/run-config.js';
import { appendJsonl } from '../../core/storage/jsonl.js';
import { writeJsonAtomicSync } from '../../core/storage/atomic.js';

export const PYTHON = process.env['SPA_PYTHON'] ?? 'python3';

/** Whether `python3` has the packages the format tests need (pyarrow, pandas, omegaconf). */
export function pythonHas(modules: string[]): boolean {
  const r = spawnSync(PYTHON, ['-c', modules.map((m) => `import ${m}`).join('; ')], { encoding: 'utf8' });
  return r.status === 0;
}

export function runPython(args: string[], input?: string): string {
  const r = spawnSync(PYTHON, args, { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${PYTHON} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

export interface FixtureRun { runId: string; runDir: string; episodes: EpisodeRecord[] }

/** A completed SPA run (self-play only) of `games` random well-formed games in projectDir/runs/<runId>. */
export async function makeWorkbenchRun(projectDir: string, opts: { env?: string; template?: string; games?: number; runId?: string } = {}): Promise<FixtureRun> {
  const r = resolveRunConfig({ preset: 'spa', size: 'smoke', set: { 'env.id': opts.env ?? 'sokoban', 'template.preset': opts.template ?? 'spa' } });
  if (!r.ok || !r.config) throw new Error(`fixture config: ${JSON.stringify(r.issues)}`);
  const config = r.config;
  const runId = opts.runId ?? `fixture-${config.env.id}`;
  const runDir = path.join(projectDir, 'runs', runId);
  fs.mkdirSync(runDir, { recursive: true });
  const template = runTemplate(config);
  writeJsonAtomicSync(path.join(runDir, 'template.json'), template);
  const limits = RolloutSectionSchema.parse(config.stages.rollout ?? {});
  const noModel = { encodePrompt: () => [] } as unknown as ModelRuntime;   // the random writer answers every turn; prompts are not encoded for a model
  const deps = rolloutDeps(config, noModel, limits, { runId, stage: 'selfplay', step: 0 }, { random: true, seed: 5, template });
  const results = await playEpisodes(groupSpecs('selfplay', 1000, 0, opts.games ?? 6, 1), limits, 11, deps);
  const episodes = results.map((x) => x.record);
  const spans = appendJsonl(path.join(runDir, 'rollouts/selfplay.jsonl'), episodes);
  const index: EpisodeSummary[] = episodes.map((e, i) => ({
    id: e.id, stage: e.stage, step: e.step, seed: e.seed, group: e.group, sample: e.sample, success: e.success, totalReward: e.totalReward,
    numTurns: e.numTurns, formatErrors: e.formatErrors, invalidActions: e.invalidActions, file: 'rollouts/selfplay.jsonl', offset: spans[i]!.offset, length: spans[i]!.length,
  }));
  appendJsonl(path.join(runDir, 'rollouts/index.jsonl'), index);
  const systemPrompt = sessionFactory(config, template, limits)({ seed: 0, group: 0, sample: 0, id: 'x' }).messages()[0]!.content;
  const built = buildSftRows(episodes, { groundTruthReplacement: true, systemPrompt });
  const cut = Math.max(1, Math.floor(built.rows.length * 0.75));
  appendJsonl(path.join(runDir, 'datasets/sft-train.jsonl'), built.rows.slice(0, cut));
  appendJsonl(path.join(runDir, 'datasets/sft-val.jsonl'), built.rows.slice(cut));
  const now = 1_700_000_000_000;
  writeJsonAtomicSync(path.join(runDir, 'run.json'), {
    id: runId, name: `fixture ${config.env.id}`, method: config.method, env: config.env.id, size: config.size, preset: 'spa', templateHash: null,
    status: 'completed', reason: null, createdAt: now, startedAt: now, finishedAt: now, durationMs: 1, attempts: 1,
    stages: [{ name: 'selfplay', title: 'Self-play', status: 'completed', startedAt: now, finishedAt: now, reason: null, done: 1, total: 1 }],
    progress: null, latest: {}, config, versions: {},
  });
  return { runId, runDir, episodes };
}

/** RAGEN's rollout-cache form of a workbench episode (what es_manager.get_rollout_states() holds). */
export function toRagenCache(ep: EpisodeRecord, envId: number, maxActions = 10): Record<string, unknown> {
  let left = maxActions;
  const history: Record<string, unknown>[] = ep.turns.map((t) => {
    const entry = {
      state: t.stateBefore.text, actions_left: left, actions: t.actionsExecuted, reward: t.reward,
      info: { action_is_effective: t.flags.actionIsEffective, action_is_valid: !t.flags.invalidAction, success: ep.success },
      llm_response: t.response, llm_raw_response: t.response,
    };
    left -= t.actionsExecuted.length;
    return entry;
  });
  const last = ep.turns[ep.turns.length - 1];
  history.push({ state: last ? last.stateAfter.text : ep.initialState.text, actions_left: left });
  return {
    env_id: envId, group_id: ep.group, tag: ep.env === 'sokoban' ? 'WorkbenchSokoban' : 'WorkbenchFrozenLake', penalty: 0, history,
    metrics: { [`${ep.env === 'sokoban' ? 'WorkbenchSokoban' : 'WorkbenchFrozenLake'}/success`]: ep.success ? 1 : 0 },
    seed: ep.seed, terminated: ep.terminated, truncated: ep.truncated, env_type: ep.env === 'sokoban' ? 'workbench_sokoban' : 'workbench_frozen_lake',
  };
}

/** The PPO command's Hydra overrides, as an exported launch.sh passes them (shell variables substituted from `vars`). */
export function ppoOverrides(launch: string, vars: Record<string, string>): string[] {
  const cmd = launch.slice(launch.indexOf('python ../train.py'), launch.indexOf('2>&1 | tee "$OUT/ppo.log"'));
  return cmd.split('\\\n').slice(1).map((l) => l.trim()).filter(Boolean)
    .map((o) => o.replace(/"/g, '').replace(/\$([A-Z_]+)/g, (_, v: string) => vars[v] ?? `<${v}>`));
}
