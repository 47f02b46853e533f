// RWML on TextWorld with the real all-MiniLM-L6-v2 reward (stages.rwml.similarity = embedding), smoke size: the RWML stage
// loads the model from the cache and completes; pointed at a folder without the model it fails naming the install command.
// The smoke model is untrained: its replies are rarely well-formed, so a step may have no example to score
// (rwml/examples 0); the reward itself is tested on TextWorld states in tests/model/embedding-reward.test.ts.
// Skipped, with the reason printed, without TextWorld or without the model in the cache (.ci/install-envs.sh).
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunConfigInput } from '../../core/api/run-config.js';
import { describeEnv } from '../../core/envs/index.js';
import { defaultEmbeddingModelDir } from '../../core/model/embedding.js';
import { readJsonl, runPreset, tempProject } from '../train/helpers.js';

const why = describeEnv('textworld').docs.summary.startsWith('Unavailable')
  ? 'TextWorld is not installed'
  : existsSync(join(defaultEmbeddingModelDir(), 'model.safetensors')) ? null : `no model at ${defaultEmbeddingModelDir()}`;
if (why) console.warn(`*** TextWorld RWML smoke skipped: ${why}; run .ci/install-envs.sh ***`);

const overrides = (rwml: Record<string, unknown>): RunConfigInput =>
  ({ env: { id: 'textworld' }, stages: { plan: { order: ['rwml'] }, rwml: { similarity: 'embedding', threshold: 0.8, steps: 2, ...rwml } } }) as RunConfigInput;

describe.skipIf(why !== null)('RWML on TextWorld with the MiniLM reward', () => {
  it('completes its steps with the real model', async () => {
    const { outcome, runDir } = await runPreset(tempProject(), 'rwml-rl', 'r', overrides({}));
    expect(outcome).toEqual({ status: 'completed' });
    const points = (readJsonl(join(runDir, 'metrics.jsonl')) as Array<{ stage: string; step: number; values: Record<string, number> }>)
      .filter((m) => m.stage === 'rwml' && 'rwml/predictionReward' in m.values);
    expect(points.map((p) => p.step)).toEqual([1, 2]);
    expect(existsSync(join(runDir, 'stages', 'rwml', 'done.json'))).toBe(true);
  }, 600_000);

  it('stops with an error naming the install command when the model folder is missing', async () => {
    const { outcome } = await runPreset(tempProject(), 'rwml-rl', 'r', overrides({ embeddingModel: '/nonexistent/all-MiniLM-L6-v2' }));
    expect(outcome.status).toBe('failed');
    expect((outcome as { reason?: string }).reason).toMatch(/\/nonexistent\/all-MiniLM-L6-v2\/config\.json is missing[\s\S]*install-envs\.sh/);
  }, 600_000);
});
