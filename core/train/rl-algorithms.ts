// RL algorithms as rows of one table (CleanRL's "one algorithm per file", made pluggable): each row says whether the
// algorithm needs a critic, how it builds its update rows from a step's samples, and which registered losses one update
// runs. The RL stage (rl-stage.ts) reads only this table, so a variant is one file (its row, plus its losses registered in
// that file) and one line in RL_ALGORITHMS below. This module is also the one import of the RL losses: the pipeline's
// runtime (runtime.ts) and the data-parallel worker threads (dp-worker-entry.ts) import it, so a loss registered by any
// row's file is known in every thread.
import type { RlSection } from '../api/run-config.js';
import type { samplingStats, TurnSample } from './ppo.js';
import type { TrainRow } from './runtime.js';
import './losses.js';
import { ppoAlgorithm } from './ppo.js';
import { drGrpoAlgorithm, grpoAlgorithm, reinforceAlgorithm } from './grpo.js';

/** What a row's buildRows gets: the step's kept samples with their sampling statistics, and the rewards. */
export interface RlRowsInput {
  samples: TurnSample[];
  turnRewards: number[][];       // per episode, per turn
  episodeRewards: number[];      // per episode
  groups: number[];              // per episode: the puzzle group
  stats: Awaited<ReturnType<typeof samplingStats>>;
  section: RlSection;
}

/** A model one update trains: the policy, or the critic (a separate model, or the value view of the shared trunk). */
export interface RlTrainable {
  trainStep(lossName: string, rows: TrainRow[], params: Record<string, unknown>, lr: number, gradClip: number): Promise<Record<string, number>>;
}

export interface RlAlgorithm {
  id: string;
  /** One line for docs and errors. */
  summary: string;
  /** A critic is loaded (separate or a value head on the policy) and sampling records values. */
  needsCritic: boolean;
  /** The update rows (lossMask, oldLogprobs, advantages, ...) and the step's charts (advantage mean/std, explained variance, ...). */
  buildRows(input: RlRowsInput): { rows: TrainRow[]; charts: Record<string, number> };
  /** One update on a minibatch: the registered losses it runs, on which model, at which learning rate. */
  update(
    models: { policy: RlTrainable; critic: RlTrainable | null }, batch: TrainRow[], lossParams: Record<string, unknown>, section: RlSection,
  ): Promise<Record<string, number>>;
}

/** The table: `rl.algorithm` in the run config names a row. */
export const RL_ALGORITHMS: Record<string, RlAlgorithm> = {
  ppo: ppoAlgorithm,
  grpo: grpoAlgorithm,
  'dr-grpo': drGrpoAlgorithm,
  reinforce: reinforceAlgorithm,
};

/**
 * Refuse, by name, an RL section whose settings this version cannot run (before any rollout): responseMask 'after-system'
 * (SPA's released config trains the environment's tokens too, SPA@3848e68 config/base.yaml:16) needs rows spanning whole
 * episodes with env tokens in the loss and in GAE; the product's rows are per turn and train reply tokens only.
 */
export function assertRlSectionSupported(section: Pick<RlSection, 'responseMask'>): void {
  if (section.responseMask !== 'reply') {
    throw new Error(`rl.responseMask ${JSON.stringify(section.responseMask)} is not implemented: the RL stage trains the model's reply ` +
      "tokens only ('reply', RAGEN's default). SPA's released PPO config (enable_response_mask False, SPA@3848e68 config/base.yaml:16) " +
      "also trains the environment's text after the system prompt; export the run to RAGEN (export --to spa-ragen --values paper) " +
      "to run that, or set rl.responseMask to 'reply'");
  }
}

/** The row of an algorithm id; throws naming the table's ids for an unknown one. */
export function rlAlgorithm(id: string): RlAlgorithm {
  const row = Object.hasOwn(RL_ALGORITHMS, id) ? RL_ALGORITHMS[id] : undefined;
  if (!row) {
    throw new Error(`unknown RL algorithm ${JSON.stringify(id)} (rl.algorithm); expected one of ${Object.keys(RL_ALGORITHMS).join(', ')} ` +
      '(RL_ALGORITHMS in core/train/rl-algorithms.ts)');
  }
  return row;
}
