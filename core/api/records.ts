// Shared data records that cross the API: boards, per-turn and per-episode rollout records,
// metric points and run events. Written by the engine (core/train, core/eval), stored by
// core/storage as JSONL, served by the dispatcher, shown by the renderer.
// Plain JSON only. This file must not import Node modules (the renderer type-checks against it).
import { z } from 'zod';

/**
 * Kind of one board cell: open, each env declares its own (EnvDefinition.vocabulary.cells, served with its legend by envs.list
 * and envs.describe; the renderer draws boards from that legend). 'unknown' is shared: an unparseable or self-contradicting cell
 * of a predicted board.
 */
export const CellKindSchema = z.string().min(1).max(64);
export type CellKind = string;

/** A grid board as the UI draws it and the world-model scorer compares it. */
export const BoardSchema = z.object({
  env: z.string(),                                   // env id, e.g. "sokoban"
  rows: z.number().int().nonnegative(),
  cols: z.number().int().nonnegative(),
  cells: z.array(z.array(CellKindSchema)),           // [rows][cols]
  values: z.array(z.array(z.number().int().nullable())).optional(), // Sudoku digits, null = empty
  givens: z.array(z.array(z.boolean())).optional(),  // Sudoku: true where the digit is a clue
});
export type Board = z.infer<typeof BoardSchema>;

/** World-model score of one predicted/observed state against the truth. */
export const WmScoreSchema = z.object({
  parsed: z.boolean(),                // could the text be parsed into a board at all
  exact: z.boolean(),                 // every cell equal
  cellAccuracy: z.number(),           // fraction of cells equal, 0..1
  entityF1: z.record(z.string(), z.number()), // per entity kind, e.g. { player: 1, box: 0.5, target: 1 }
  meanF1: z.number(),                 // mean of entityF1 values (per cell for Sudoku)
  wrongCells: z.array(z.tuple([z.number().int(), z.number().int()])), // [row, col] zero-based
});
export type WmScore = z.infer<typeof WmScoreSchema>;

export const ParsedResponseSchema = z.object({
  observation: z.string().nullable(),
  reasoning: z.string().nullable(),
  prediction: z.string().nullable(),
  answer: z.string().nullable(),
  actions: z.array(z.string()),        // canonical action names that were kept, in order
  unknownActions: z.array(z.string()), // dropped tokens that were not legal actions
  formatError: z.boolean(),            // required tags missing or out of order
  formatErrors: z.array(z.string()),   // human-readable reasons
});
export type ParsedResponse = z.infer<typeof ParsedResponseSchema>;

export const StateSnapshotSchema = z.object({
  text: z.string(),   // the state rendered with the run's template (what the model should write)
  board: BoardSchema,
});
export type StateSnapshot = z.infer<typeof StateSnapshotSchema>;

/**
 * Per-token statistics of one RL turn's response, stored with RL episodes (core/train/rl-stage.ts).
 * Bounded: at most TOKEN_STATS_MAX tokens per turn (the rest counted in `dropped`), numbers rounded
 * to 4 significant digits; see docs/project-format.md for the size this adds.
 */
export const TOKEN_STATS_MAX = 512;
export const TokenStatsSchema = z.object({
  tokens: z.array(z.string()),                       // decoded text of each response token, in order
  logprobs: z.array(z.number()),                     // log-probability under the policy at the update (temperature 1)
  entropies: z.array(z.number()),                    // entropy (nats) of the distribution that produced the token
  values: z.array(z.number()).nullable(),            // critic value estimate (PPO); null for GRPO
  advantages: z.array(z.number()).nullable(),        // advantage used in the update; null when the group was filtered out
  dropped: z.number().int().nonnegative(),           // response tokens past TOKEN_STATS_MAX, not stored
});
export type TokenStats = z.infer<typeof TokenStatsSchema>;

/** One assistant turn of an episode. */
export const TurnRecordSchema = z.object({
  turn: z.number().int().nonnegative(),        // zero-based turn index
  prompt: z.string(),                          // the user message of this turn (rendered by the template)
  response: z.string(),                        // the model's full reply text (including the forced "<think>")
  parsed: ParsedResponseSchema,
  stateBefore: StateSnapshotSchema,            // true state before the turn's actions
  stateAfter: StateSnapshotSchema,             // true state after the turn's actions
  observedBoard: BoardSchema.nullable(),       // model's <observation> parsed back into a board
  predictedBoard: BoardSchema.nullable(),      // model's <prediction> parsed back into a board
  wm: z.object({ observation: WmScoreSchema.nullable(), prediction: WmScoreSchema.nullable() }),
  actionsExecuted: z.array(z.string()),
  reward: z.number(),                          // turn reward (env rewards + penalties)
  flags: z.object({
    formatError: z.boolean(),
    invalidAction: z.boolean(),
    actionIsEffective: z.boolean(),
  }),
  tokens: z.object({ prompt: z.number().int(), response: z.number().int() }),
  done: z.boolean(),
  tokenStats: TokenStatsSchema.optional(),     // RL episodes only (older runs: absent)
  // the env slipped on this turn (slippery FrozenLake): which executed action went another way; absent when nothing slipped (and in older runs)
  slip: z.object({
    moves: z.array(z.object({ action: z.number().int().nonnegative(), intended: z.string(), executed: z.string() })).min(1),
    intendedBoard: BoardSchema.nullable(),     // the state the turn's moves would have reached without the slip (one-move turns), else null
    predictionVsIntended: WmScoreSchema.nullable(), // the prediction scored against intendedBoard: did it predict the intended outcome?
  }).optional(),
});
export type TurnRecord = z.infer<typeof TurnRecordSchema>;

/** One episode (game) of a rollout. */
export const EpisodeRecordSchema = z.object({
  id: z.string(),                // unique within the run, e.g. "rl-000012-g03-s5"
  runId: z.string(),
  stage: z.string(),             // "selfplay" | "rl" | "eval" | ...
  step: z.number().int(),        // training step (RL) or 0
  env: z.string(),
  envConfig: z.record(z.string(), z.unknown()),
  seed: z.number().int(),
  group: z.number().int(),       // group index (episodes of a group share the seed)
  sample: z.number().int(),      // index within the group
  templateHash: z.string(),
  success: z.boolean(),
  totalReward: z.number(),
  numTurns: z.number().int(),
  numActions: z.number().int(),
  formatErrors: z.number().int(),
  invalidActions: z.number().int(),
  terminated: z.boolean(),
  truncated: z.boolean(),
  initialState: StateSnapshotSchema,
  turns: z.array(TurnRecordSchema),
  time: z.number(),              // ms since epoch when the episode finished
  system: z.string().optional(), // the system message the model saw (episodes written before it was stored: absent)
});
export type EpisodeRecord = z.infer<typeof EpisodeRecordSchema>;

/** Row of a rollout index: enough to filter and page without reading episodes. */
export const EpisodeSummarySchema = z.object({
  id: z.string(),
  stage: z.string(),
  step: z.number().int(),
  seed: z.number().int(),
  group: z.number().int(),
  sample: z.number().int(),
  success: z.boolean(),
  totalReward: z.number(),
  numTurns: z.number().int(),
  formatErrors: z.number().int(),
  invalidActions: z.number().int(),
  file: z.string(),              // rollouts/<file>.jsonl relative to the run folder
  offset: z.number().int(),      // byte offset of the line
  length: z.number().int(),      // byte length of the line (without newline)
  wmAccuracy: z.number().nullable().optional(), // filled by rollouts.query: mean world-model cell accuracy (null: nothing scored)
});
export type EpisodeSummary = z.infer<typeof EpisodeSummarySchema>;

/** One line of metrics.jsonl: scalars logged at a step of a stage. */
export const MetricPointSchema = z.object({
  stage: z.string(),
  step: z.number(),
  time: z.number(),              // ms since epoch
  episodes: z.number().optional(), // episodes seen so far in the stage (x-axis option)
  values: z.record(z.string(), z.number()), // e.g. { "losses/policy": 0.1, "charts/success": 0.4 }
});
export type MetricPoint = z.infer<typeof MetricPointSchema>;

// imported: read-only, from SPA/RAGEN (core/interop)
export const RunStatusSchema = z.enum(['created', 'queued', 'running', 'stopping', 'stopped', 'completed', 'failed', 'imported']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const StageStatusSchema = z.enum(['pending', 'running', 'completed', 'failed', 'stopped', 'skipped']);
export type StageStatus = z.infer<typeof StageStatusSchema>;

/** What actually ran a run: stored in run.json (RunInfo.provenance) by the host from the engine's `provenance` event; old runs lack it. */
export const RunProvenanceSchema = z.object({
  backend: z.string(),      // compute backend that ran the model: torch | wasm | cpu | tensorflow | tensorflow-gpu
  device: z.string(),       // e.g. "CUDA NVIDIA H200", "Apple MPS", "CPU (2 threads)"
  codeVersion: z.string(),  // "git:<commit>" ("-dirty" appended when the tree had changes), else "package:<version>"
});
export type RunProvenance = z.infer<typeof RunProvenanceSchema>;

/** Events a run emits; appended to events.jsonl and forwarded live to subscribers. */
export const RunEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('status'), runId: z.string(), time: z.number(), status: RunStatusSchema, reason: z.string().optional() }),
  z.object({ type: z.literal('stage'), runId: z.string(), time: z.number(), stage: z.string(), status: StageStatusSchema, reason: z.string().optional() }),
  z.object({
    type: z.literal('progress'), runId: z.string(), time: z.number(), stage: z.string(), done: z.number(), total: z.number(),
    etaSeconds: z.number().nullable(), message: z.string().optional(),
    runEtaSeconds: z.number().nullable().optional(), unestimatedStages: z.number().int().optional(),   // whole run, added by the host (core/engine/run-eta.ts)
  }),
  z.object({ type: z.literal('metric'), runId: z.string(), time: z.number(), point: MetricPointSchema }),
  z.object({ type: z.literal('episode'), runId: z.string(), time: z.number(), summary: EpisodeSummarySchema }),
  z.object({ type: z.literal('checkpoint'), runId: z.string(), time: z.number(), stage: z.string(), step: z.number(), path: z.string() }),
  z.object({
    type: z.literal('log'), runId: z.string(), time: z.number(), level: z.enum(['debug', 'info', 'warn', 'error']),
    message: z.string(), stage: z.string().optional(),
  }),
  // the backend, device and code version of this attempt, sent once its backend is chosen (the host stores it in run.json)
  z.object({ type: z.literal('provenance'), runId: z.string(), time: z.number(), provenance: RunProvenanceSchema }),
]);
export type RunEvent = z.infer<typeof RunEventSchema>;

/** Errors crossing the API: what was expected, what arrived, where. */
export const ApiErrorSchema = z.object({
  name: z.string(),
  message: z.string(),
  details: z.object({
    where: z.string().optional(),
    expected: z.string().optional(),
    received: z.string().optional(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }).passthrough().optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;
