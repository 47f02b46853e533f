// The WorkbenchApi contract: every request and response the UI (or any client) can exchange
// with the engine, as zod schemas, plus the TypeScript types derived from them and the event
// stream types. One dispatcher (core/host/dispatcher.ts) implements it; the hosts (Electron IPC,
// the WebSocket server, in-process) only carry it.
//
// This file must not import Node modules: the renderer type-checks against it (type-only imports).
// Only plain JSON crosses the API. Errors cross as ApiError `{ name, message, details }`.
import { z } from 'zod';
import {
  ApiErrorSchema, BoardSchema, EpisodeRecordSchema, EpisodeSummarySchema, RunEventSchema, RunProvenanceSchema, type RunProvenance,
  RunStatusSchema, StageStatusSchema, TurnRecordSchema, WmScoreSchema,
} from './records.js';
import { EnvConfigSchema, MethodSchema, PresetSizeSchema, RunConfigSchema, SizeSchema, TemplateRefSchema, type Size } from './run-config.js';

// ───────────────────────────── shared pieces ─────────────────────────────

const Empty = z.object({}).strict().default({});
const Id = z.string().min(1).max(200);
const RunId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a run id: letters, digits, ".", "_" or "-", at most 128 characters');
/** A checkpoint folder name under runs/<run>/checkpoints/. */
const CheckpointName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'a checkpoint folder name (see templates.checkpoints)');
const PathString = z.string().min(1).max(4096).refine((p) => !p.includes('\u0000'), 'a path cannot contain a NUL character');
const Offset = z.number().int().nonnegative().default(0);
const pageLimit = (def: number, max: number) => z.number().int().positive().max(max).default(def);
const JsonObject = z.record(z.string(), z.unknown());

// The run sizes are listed once, in core/api/run-config.ts (RUN_SIZES); re-exported here for the API's clients.
export { SizeSchema, type Size };

// ───────────────────────────── projects ─────────────────────────────

export const ProjectInfoSchema = z.object({
  id: z.string(),                    // stable project id (random, set at creation)
  name: z.string(),
  path: z.string(),                  // absolute path of the project folder
  createdAt: z.number(),             // ms since epoch
  schemaVersion: z.number().int(),
  runCount: z.number().int(),
  readOnly: z.boolean(),             // true when another process holds the lock: opened to watch, following its runs from the files
  warnings: z.array(z.string()),     // recoveries done on open (moved-aside files, torn lines, runs marked failed)
  holder: z.object({                 // who holds the lock of a read-only project
    pid: z.number().int(), host: z.string(), purpose: z.string(), startedAt: z.number(),
    canStop: z.boolean(),            // runs.stop reaches it (a `run`/`study run` on this machine, as `spa-workbench stop` does)
  }).nullable().optional(),
});
export type ProjectInfo = z.infer<typeof ProjectInfoSchema>;

export const RecentProjectSchema = z.object({
  path: z.string(),
  name: z.string(),
  openedAt: z.number(),
  exists: z.boolean(),               // false when the folder is gone (shown greyed out)
});
export type RecentProject = z.infer<typeof RecentProjectSchema>;

// ───────────────────────────── runs ─────────────────────────────

export const StageStateSchema = z.object({
  name: z.string(),
  title: z.string(),
  status: StageStatusSchema,
  startedAt: z.number().nullable(),
  finishedAt: z.number().nullable(),
  reason: z.string().nullable(),                  // why it failed / stopped
  done: z.number(),                               // progress counters of the latest progress event
  total: z.number(),
});
export type StageState = z.infer<typeof StageStateSchema>;

export const RunProgressSchema = z.object({
  stage: z.string(),
  done: z.number(),
  total: z.number(),
  etaSeconds: z.number().nullable(),
  message: z.string().optional(),
  runEtaSeconds: z.number().nullable().optional(),  // whole run: this stage's ETA + the usual time of the stages to come (core/engine/run-eta.ts)
  unestimatedStages: z.number().int().optional(),   // stages to come with no estimate (never finished in a comparable run)
});

/** One row of the run table (kept in workbench.json's run index). */
export const RunSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  method: MethodSchema,
  env: z.string(),                                // env id
  size: SizeSchema,
  preset: z.string().nullable(),                  // preset it was created from
  templateHash: z.string().nullable(),            // resolved template version (content hash)
  status: RunStatusSchema,
  reason: z.string().nullable(),                  // why it failed / stopped (exit code, signal, error)
  createdAt: z.number(),
  startedAt: z.number().nullable(),               // last start (or resume)
  finishedAt: z.number().nullable(),
  durationMs: z.number(),                         // summed wall time of all attempts
  attempts: z.number().int(),                     // how many times it was started (1 + resumes)
  stages: z.array(StageStateSchema),
  progress: RunProgressSchema.nullable(),
  latest: z.record(z.string(), z.number()),       // latest value of each metric name (key metrics for the table)
  tags: z.array(z.string()).optional(),           // the user's labels (runs.update), e.g. "baseline", "lr-sweep"
  notes: z.string().optional(),                   // the user's free-text notes (runs.update)
  // config leaves that differ from the defaults, by dotted path (core/engine/config-params.ts)
  params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** runs.estimate: how long a run would take, before it is created (core/engine/run-estimate.ts). */
export const RunEstimateSchema = z.object({
  seconds: z.number().nullable(),                                   // sum of the estimated stages; null when none is
  stages: z.array(z.object({ name: z.string(), seconds: z.number().nullable(), source: z.string().nullable() })), // where each number comes from
  unestimated: z.array(z.string()),                                 // stages with no measurement to go by
  bootstrap: z.enum(['shipped', 'cached', 'train']).nullable(),     // where the bootstrap base would come from; null: no bootstrap stage
  warning: z.string().nullable(),                                   // e.g. a bootstrap base must be trained first (with its estimate)
  shippedBaseEnvs: z.array(z.string()),                             // envs with a shipped base (their runs skip the bootstrap's training)
  // a model folder's memory per stage (core/engine/memory-model.ts, the torch worker on CUDA) and which card and GPU size fit; null: no folder to read
  memory: z.object({
    model: z.string(),                                              // what was read: "576 wide, 30 layers, vocab 49152 (134.5M parameters)"
    stages: z.array(z.object({ stage: z.string(), title: z.string(), gib: z.number() })),
    peak: z.object({ stage: z.string(), gib: z.number(), withMarginGib: z.number() }),
    cards: z.array(z.object({ gib: z.number(), fits: z.boolean() })), // 24 / 48 / 80 GiB cards, with the measured margin
    fitsSize: z.string().nullable(),                                // the smallest GPU size whose card fits; null: none does
  }).nullable().optional(),
});
export type RunEstimate = z.infer<typeof RunEstimateSchema>;

export { RunProvenanceSchema, type RunProvenance };   // defined beside the run events (core/api/records.ts)

/** Everything run.json holds: the summary plus the resolved config and provenance. */
export const RunInfoSchema = RunSummarySchema.extend({
  config: RunConfigSchema,                        // the resolved spec: every field, defaults filled in (core/api/run-config.ts)
  schemaVersion: z.number().int().positive().optional(),  // RUN_SPEC_VERSION when written; absent: 1 (a config of set keys only)
  provenance: RunProvenanceSchema.optional(),     // backend, device and code version that ran it (absent: not recorded)
  versions: z.record(z.string(), z.string()),     // app, node, zod, tfjs... at creation
  dir: z.string(),                                // absolute run folder
});
export type RunInfo = z.infer<typeof RunInfoSchema>;

export const PresetInfoSchema = z.object({
  id: z.string(),                                 // e.g. "spa", "vanilla-rl", "diagnostic-wait"
  title: z.string(),
  description: z.string(),
  method: MethodSchema,
  sizes: z.array(SizeSchema),                     // sizes this preset defines
  stages: z.array(z.string()),                    // the stage plan for the default size
  config: JsonObject,                             // the preset's config (RunConfig input) for the default size
});
export type PresetInfo = z.infer<typeof PresetInfoSchema>;

export const ConfigIssueSchema = z.object({ path: z.string(), message: z.string() });

// ───────────────────────────── envs ─────────────────────────────

/** One cell kind of an env's boards with its legend (EnvDefinition.vocabulary.cells); the renderer draws boards from it. */
export const CellLegendSchema = z.object({
  kind: z.string(),                               // the Board cell kind, e.g. "boxOnTarget"
  symbol: z.string(),                             // its grid symbol, e.g. "√"
  label: z.string(),                              // for people, e.g. "box on target"
  glyphs: z.array(z.string()),                    // glyph layers, background first (renderer: board-shapes.ts; unknown names draw the symbol)
  entities: z.array(z.string()),                  // entity kinds on such a cell (e.g. box, target)
});
export type CellLegend = z.infer<typeof CellLegendSchema>;

export const EnvInfoSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  actions: z.array(z.string()),                   // legal action names (canonical spelling)
  defaultOptions: JsonObject,                     // constructor arguments with their defaults
  cells: z.array(CellLegendSchema),               // the board legend, served by the env
});
export type EnvInfo = z.infer<typeof EnvInfoSchema>;

export const EnvOptionSchema = z.object({
  name: z.string(),
  type: z.string(),                               // "integer" | "number" | "boolean" | "string" | "enum" | ...
  default: z.unknown(),
  doc: z.string(),
  min: z.number().optional(),
  max: z.number().optional(),
  values: z.array(z.union([z.string(), z.number()])).optional(),
  nullable: z.boolean().optional(),
});
export type EnvOption = z.infer<typeof EnvOptionSchema>;

export const EnvDescriptionSchema = EnvInfoSchema.extend({
  /** Documentation sections, same keys for every env: summary, actions, observation, rewards, episodeEnd, arguments. */
  sections: z.record(z.string(), z.string()),
  options: z.array(EnvOptionSchema),              // constructor arguments (for a generated form)
  actionPattern: z.string().optional(),           // e.g. Sudoku "row,col,value"
  instruction: z.string(),                        // prompt pieces templates use
  legend: z.string(),
  budget: z.object({ maxTurns: z.number().int(), maxActionsPerTurn: z.number().int(), maxActionsPerGame: z.number().int() }),
  hasSolver: z.boolean(),
});
export type EnvDescription = z.infer<typeof EnvDescriptionSchema>;

export const ChatMessageSchema = z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const RenderedPuzzleSchema = z.object({
  env: z.string(),
  seed: z.number().int(),
  options: JsonObject,                            // resolved env options
  board: BoardSchema,
  gridText: z.string(),                           // raw symbolic grid
  stateText: z.string(),                          // the state rendered with the template
  prompt: z.string(),                             // the first user message the model sees
  messages: z.array(ChatMessageSchema),           // the whole conversation start (system + first user turn)
  legalActions: z.array(z.string()),
  templateHash: z.string().nullable(),
});
export type RenderedPuzzle = z.infer<typeof RenderedPuzzleSchema>;

// ───────────────────────────── templates ─────────────────────────────

export const TemplateNameSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a template name: lower-case letters, digits and "-", at most 64 characters');

export const TemplateVersionMetaSchema = z.object({
  name: z.string(),
  hash: z.string(),                               // content hash (immutable version id)
  createdAt: z.number(),
  description: z.string(),
  parent: z.string().nullable(),                  // hash of the version it was derived from
});
export type TemplateVersionMeta = z.infer<typeof TemplateVersionMetaSchema>;

export const TemplateVersionSchema = TemplateVersionMetaSchema.extend({
  source: z.string(),                             // template text (interpreted by core/prompts)
});
export type TemplateVersion = z.infer<typeof TemplateVersionSchema>;

export const TemplateListItemSchema = z.object({
  name: z.string(),
  kind: z.enum(['preset', 'saved']),              // built-in preset, or saved in this project
  description: z.string(),
  latestHash: z.string().nullable(),
  versionCount: z.number().int(),
});
export type TemplateListItem = z.infer<typeof TemplateListItemSchema>;

export const TemplateDiagnosticSchema = z.object({
  message: z.string(),
  line: z.number().int().nullable(),              // one-based
  column: z.number().int().nullable(),            // one-based
  severity: z.enum(['error', 'warning']),
});
export type TemplateDiagnostic = z.infer<typeof TemplateDiagnosticSchema>;

export const TemplatePreviewSchema = z.object({
  ok: z.boolean(),
  diagnostics: z.array(TemplateDiagnosticSchema),
  hash: z.string().nullable(),
  stateText: z.string().nullable(),               // the sampled state rendered
  prompt: z.string().nullable(),                  // the first user message
  messages: z.array(ChatMessageSchema),
  board: BoardSchema.nullable(),
});
export type TemplatePreview = z.infer<typeof TemplatePreviewSchema>;

/** A checkpoint folder of a run (runs/<runId>/checkpoints/<name>/), from its manifest.json. */
export const CheckpointInfoSchema = z.object({
  name: z.string(),                               // folder name, e.g. "bootstrap", "sft-epoch-2", "rl-10"
  dir: z.string(),                                // absolute folder
  stage: z.string().nullable(),                   // stage that wrote it
  step: z.number().nullable(),
  created: z.string().nullable(),                 // ISO time of writing
  role: z.enum(['policy', 'critic']),             // critic (value model) checkpoints are never the default
});
export type CheckpointInfo = z.infer<typeof CheckpointInfoSchema>;

/** State perplexity of a template under a checkpoint (core/eval/template-perplexity.ts). */
export const TemplatePerplexitySchema = z.object({
  perplexity: z.number(),                         // exp(meanNll)
  meanNll: z.number(),                            // nats per state token
  tokens: z.number().int(),                       // state-content tokens scored (observation + prediction)
  rows: z.number().int(),                         // rows scored (= samples)
  samples: z.number().int(),
  seedStart: z.number().int(),                    // seeds seedStart … seedStart + samples - 1
  runId: z.string(),
  checkpoint: CheckpointInfoSchema,
  template: z.object({ name: z.string(), hash: z.string(), from: z.enum(['text', 'saved', 'preset']) }),
  env: z.object({ id: z.string(), options: JsonObject }),
  backend: z.string(),                            // TF.js backend that ran it
  maxContext: z.number().int(),                   // the checkpoint's context in tokens
  longestRow: z.number().int(),                   // tokens of the longest row
  wallSeconds: z.number(),                        // load + scoring, inside the child process
  processSeconds: z.number(),                     // the whole call as the host saw it (process start included)
});
export type TemplatePerplexity = z.infer<typeof TemplatePerplexitySchema>;

// ───────────────────────────── rollouts, datasets, metrics, evals ─────────────────────────────

/** Columns the trace list sorts by (rollouts.query sortBy). "wm" is the mean world-model cell accuracy. */
export const RolloutSortKeySchema = z.enum([
  'index',
  'id',
  'step',
  'seed',
  'group',
  'sample',
  'success',
  'reward',
  'turns',
  'formatErrors',
  'invalidActions',
  'wm',
]);
export type RolloutSortKey = z.infer<typeof RolloutSortKeySchema>;

export const RolloutQuerySchema = z.object({
  runId: RunId,
  stage: z.string().optional(),
  step: z.number().int().optional(),              // exact step
  stepMin: z.number().int().optional(),
  stepMax: z.number().int().optional(),
  outcome: z.enum(['all', 'success', 'failure']).default('all'),
  seed: z.number().int().optional(),
  formatErrors: z.enum(['any', 'none', 'some']).default('any'),
  sort: z.enum(['index', 'reward-asc', 'reward-desc']).default('index'),
  group: z.number().int().optional(),             // one PPO group (episodes sharing a puzzle at a step)
  sortBy: RolloutSortKeySchema.optional(),        // any column (overrides sort); ties keep index order
  order: z.enum(['asc', 'desc']).default('asc'),
  search: z.string().min(1).max(500).optional(),  // case-insensitive text in any turn's response (reads episode files)
  wmMin: z.number().min(0).max(1).optional(),     // mean world-model cell accuracy of the episode, inclusive bounds;
  wmMax: z.number().min(0).max(1).optional(),     // episodes with nothing scored never match a bound
  offset: Offset,
  limit: pageLimit(50, 1000),
}).strict();

export const RolloutFacetsSchema = z.object({
  stages: z.array(z.object({
    stage: z.string(),
    count: z.number().int(),
    minStep: z.number().int(),
    maxStep: z.number().int(),
    successes: z.number().int(),
  })),
});

/** One SFT row (datasets/sft-{train,val}.jsonl), written by the pipeline's self-play stage. */
export const SftRowSchema = z.object({
  id: z.string(),                                 // unique row id, e.g. "<episodeId>-t<turn>"
  episodeId: z.string(),
  seed: z.number().int(),
  turn: z.number().int(),
  prompt: z.string(),                             // the conversation up to this turn as text
  original: z.string(),                           // the model's own response
  corrected: z.string(),                          // with observation/prediction replaced by the truth
  drill: z.boolean().optional(),                  // a one-action drill (selfplay.drills): SFT trains its state contents only
}).loose();
export type SftRow = z.infer<typeof SftRowSchema>;

/** datasets/sft-stats.json, written by the pipeline: counts and the filter's drop reasons. */
export const DatasetStatsSchema = z.object({
  train: z.number().int(),                        // rows kept for training
  val: z.number().int(),                          // rows kept for validation
  dropped: z.record(z.string(), z.number().int()), // reason → count of dropped turns
  games: z.object({ train: z.number().int(), val: z.number().int() }).optional(),
  drills: z.number().int().optional(),            // of the train rows, one-action drills (selfplay.drills)
}).loose();
export type DatasetStats = z.infer<typeof DatasetStatsSchema>;

export const MetricXSchema = z.enum(['step', 'time', 'episodes']);

/** A downsampled series: per bucket the mean and the min/max (so spikes are never hidden). */
export const MetricSeriesSchema = z.object({
  runId: z.string(),
  stage: z.string(),
  name: z.string(),
  x: z.array(z.number()),                         // bucket x (mean x of the points in the bucket)
  y: z.array(z.number()),                         // mean value per bucket
  min: z.array(z.number()),
  max: z.array(z.number()),
  count: z.array(z.number().int()),               // points per bucket (1 everywhere when not downsampled)
  totalPoints: z.number().int(),
  downsampled: z.boolean(),
});
export type MetricSeries = z.infer<typeof MetricSeriesSchema>;

/** One evaluation result file (eval/<id>.json). Content is the pipeline's; common fields named here. */
export const EvalResultSchema = z.object({
  id: z.string(),                                 // file name without .json
  stage: z.string().nullable(),
  step: z.number().nullable(),
  time: z.number().nullable(),                    // file modification time, ms
  result: JsonObject,                             // the file's content (pass@k with intervals, WM accuracy, PPL...)
});
export type EvalResult = z.infer<typeof EvalResultSchema>;

// ───────────────────────────── system ─────────────────────────────

export const BackendInfoSchema = z.object({
  name: z.enum(['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu', 'torch']),
  available: z.boolean(),
  detail: z.string(),                             // why not available, or what was found
});
export type BackendInfo = z.infer<typeof BackendInfoSchema>;

export const SystemInfoSchema = z.object({
  host: z.enum(['electron', 'serve', 'cli', 'in-process']),
  versions: z.record(z.string(), z.string()),     // app, node, platform, electron?, tfjs, zod...
  backends: z.array(BackendInfoSchema),           // best first
  paths: z.object({
    home: z.string(),                             // per-user config dir (recent projects)
    project: z.string().nullable(),
    cwd: z.string(),
  }),
  electronAvailable: z.boolean(),
});
export type SystemInfo = z.infer<typeof SystemInfoSchema>;

// ───────────────────────────── studies ─────────────────────────────

export const IntervalSchema = z.object({ mean: z.number(), low: z.number(), high: z.number(), level: z.number(), method: z.string() });

export const StudyNameSchema = z.string().regex(
  /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/,
  'a study name: letters, digits, ".", "_" or "-" (not starting with "."), at most 200 characters',
);

/**
 * pending: never started (or nothing recorded); running: its runner is executing the grid; stopped: stopped or interrupted (start again to resume);
 * completed: every run completed; failed: a run or the runner failed.
 */
export const StudyStatusSchema = z.enum(['pending', 'running', 'stopped', 'completed', 'failed']);
export type StudyStatus = z.infer<typeof StudyStatusSchema>;

export const StudyProgressSchema = z.object({
  done: z.number().int(),                       // grid cells whose run completed
  failed: z.number().int(),                     // grid cells whose run failed or was stopped
  total: z.number().int(),                      // methods × envs × seeds
  currentRunId: z.string().nullable(),          // the run being executed now
});

export const StudySummarySchema = z.object({
  name: z.string(),
  methods: z.array(z.string()),
  envs: z.array(z.string()),
  seeds: z.array(z.number().int()),
  size: z.string(),
  set: JsonObject.nullable(),                   // dotted-path overrides applied to every run
  runs: z.number().int(),                       // runs of this study found in the project
  completed: z.number().int(),
  runIds: z.array(z.string()),                  // those runs' ids, in grid order (for Compare)
  status: StudyStatusSchema,
  reason: z.string().nullable(),                // why it stopped or failed
  progress: StudyProgressSchema,
  startedAt: z.number().nullable(),             // last start or resume, ms
  finishedAt: z.number().nullable(),            // last end, ms
});
export type StudySummary = z.infer<typeof StudySummarySchema>;

export const StudyTableSchema = z.object({
  name: z.string(),
  methods: z.array(z.string()),
  envs: z.array(z.string()),
  ks: z.array(z.number().int()),
  cells: z.array(z.object({
    method: z.string(), env: z.string(), runs: z.number().int(), completed: z.number().int(),
    passAt: z.record(z.string(), IntervalSchema),  // "1", "4", ... → mean with 95% interval
    success: z.number().nullable(), wallSeconds: z.number(),
    atOrBelowChance: z.boolean().optional(),     // Pass@1 ≤ the chance row's on the same puzzles
    versusChance: z.enum(['below chance', 'indistinguishable from chance', 'above chance']).optional(), // core/api/verdict.ts chanceVerdict
  })),
  // chance (well-formed random policy) and oracle rows per env, on the same puzzles and protocol (core/eval/reference.ts)
  references: z.array(z.object({
    env: z.string(), kind: z.enum(['chance', 'oracle']), label: z.string(), how: z.string(), puzzles: z.number().int(),
    passAt: z.record(z.string(), z.number()),
  })).optional(),
  // paired per (run seed, puzzle) differences between methods, two-way bootstrap (smallN: too few puzzles for an interval)
  differences: z.array(z.object({
    env: z.string(), a: z.string(), b: z.string(), k: z.number().int(), cells: z.number().int(), diff: IntervalSchema, smallN: z.boolean(),
  })).optional(),
  // world-model exact match per method with a world-model format (core/eval/study-world-model.ts): mean over seeds and each seed
  worldModel: z.array(z.object({
    method: z.string(), env: z.string(), seeds: z.array(z.number().int()),
    mean: z.record(z.string(), z.number()), bySeed: z.array(z.record(z.string(), z.number())),
  })).optional(),
  markdown: z.string(),                          // the paper's layout: rows methods, columns envs
  csv: z.string(),
});
export type StudyTable = z.infer<typeof StudyTableSchema>;

/** projects.doctor: what a project check found and (with repair) did; see core/storage/doctor.ts. */
export const DoctorReportSchema = z.object({
  project: z.string(),
  examinedAt: z.number(),
  repair: z.boolean(),
  lock: z.object({ state: z.string(), holder: z.record(z.string(), z.unknown()).nullable(), file: z.string(), removed: z.boolean() }).nullable(),
  runs: z.object({
    total: z.number().int(),
    damaged: z.array(z.object({ id: z.string(), problem: z.string(), detail: z.string(), movedAside: z.array(z.string()), repair: z.string().nullable(),
      repaired: z.boolean() })),
  }),
  movedAside: z.array(z.object({ path: z.string(), bytes: z.number(), modifiedAt: z.number() })),
  tempLeftovers: z.array(z.object({ relPath: z.string(), kind: z.string(), pid: z.number(), bytes: z.number(), stale: z.boolean(), action: z.string(),
    done: z.boolean() })),
  stageMarkers: z.array(z.object({ path: z.string(), problem: z.string() })),
  streams: z.array(z.object({ path: z.string(), badLines: z.number().int(), tornLast: z.boolean() })),
  workbenchJson: z.enum(['ok', 'missing', 'damaged']),
  repairs: z.array(z.string()),
  problems: z.number().int(),
  notes: z.array(z.string()),
});
export type DoctorReportWire = z.infer<typeof DoctorReportSchema>;

// ───────────────────────────── inspection (issue 12: trace, charts, probe) ─────────────────────────────

/** The template a run was created with: its pinned <run>/template.json, or the preset for older runs. */
export const RunTemplateSchema = z.object({
  runId: z.string(),
  pinned: z.boolean(),                            // true: read from <run>/template.json; false: resolved from the preset name
  name: z.string(),
  hash: z.string(),                               // content hash of the template the run used
  recordedHash: z.string().nullable(),            // the hash in the run's summary (differs from hash only if the file was edited)
  responseFormat: z.enum(['plain', 'world-model']),
  source: z.string(),                             // the template text (JSON), for the editor
  env: z.object({ id: z.string(), options: JsonObject }),
});
export type RunTemplate = z.infer<typeof RunTemplateSchema>;

/** One sample of system.jsonl: the engine process and its machine, every few seconds while a run runs. */
export const SystemSampleSchema = z.object({
  time: z.number(),                               // ms since epoch
  stage: z.string().nullable(),                   // the stage running then
  cpuPercent: z.number(),                         // engine process CPU, % of one core (200 = two cores busy)
  rssMb: z.number(),                              // engine process resident memory
  heapMb: z.number(),                             // V8 heap in use
  memUsedMb: z.number(),                          // machine memory in use (total − available)
  memTotalMb: z.number(),
  loadAvg: z.number(),                            // 1-minute load average (0 on Windows)
  cores: z.number().int().positive().optional(),  // the machine's logical cores (CPU % of one core / cores = share of the machine); absent in older samples
  workerCpuPercent: z.number().optional(),        // the engine's child processes (torch workers), % of one core, where present (Linux /proc)
  workerRssMb: z.number().optional(),             // their resident memory, summed
  workerPids: z.array(z.number().int()).optional(),
  gpuPercent: z.number().optional(),              // first GPU's utilisation (nvidia-smi), where present
  gpuMemMb: z.number().optional(),
  gpuMemTotalMb: z.number().optional(),
});
export type SystemSample = z.infer<typeof SystemSampleSchema>;

export const HistogramSchema = z.object({
  edges: z.array(z.number()),                     // bins + 1 edges, ascending
  counts: z.array(z.number().int()),              // tokens per bin
  count: z.number().int(), mean: z.number(), min: z.number(), max: z.number(),
});
export type Histogram = z.infer<typeof HistogramSchema>;
export const TokenFieldSchema = z.enum(['advantages', 'logprobs', 'entropies', 'values']);
export type TokenField = z.infer<typeof TokenFieldSchema>;

/** The model's answer to an action you chose: its <prediction> for that action against the truth. */
export const ProbeActionResultSchema = z.object({
  actions: z.array(z.string()),
  text: z.string(),                               // what the model wrote (the forced prefix, then its generation)
  prediction: z.string().nullable(),              // the text inside <prediction>…</prediction>
  predictedBoard: BoardSchema.nullable(),
  trueNext: z.object({ text: z.string(), board: BoardSchema }),
  score: WmScoreSchema.nullable(),
  stepResponse: z.string(),                       // the full turn with your action as its answer: append it to history to step on with your action
});
export type ProbeActionResult = z.infer<typeof ProbeActionResultSchema>;

export const ProbeResultSchema = z.object({
  runId: z.string(),
  checkpoint: z.string(),
  env: z.object({ id: z.string(), options: JsonObject }),
  seed: z.number().int(),
  turnIndex: z.number().int(),                    // the turn the model wrote (0-based) = history length
  messages: z.array(ChatMessageSchema),           // the whole conversation the model saw for this turn
  turn: TurnRecordSchema,                         // the model's turn: response, parsed boards against the truth, scores
  actionGiven: ProbeActionResultSchema.nullable(),
  legalActions: z.array(z.string()),              // before the turn
  done: z.boolean(),                              // the episode ended with the model's own actions
  history: z.array(z.string()),                   // responses applied before this turn (send back, plus one, to step on)
  backend: z.string(),
  wallSeconds: z.number(),
});
export type ProbeResult = z.infer<typeof ProbeResultSchema>;

// ───────────────────────────── interop: SPA/RAGEN (core/interop) ─────────────────────────────

export const ExportBundleResultSchema = z.object({
  dir: z.string(),                                // absolute bundle folder
  files: z.array(z.string()),                     // files written, relative to dir
  warnings: z.array(z.string()),                  // what the bundle could not carry over (e.g. a tiny preset model)
  model: z.object({ path: z.string(), kind: z.enum(['checkpoint', 'hf-folder', 'base']), note: z.string() }),
  values: z.enum(['run', 'paper']),               // whose settings the config carries
});
export type ExportBundleResult = z.infer<typeof ExportBundleResultSchema>;

export const ImportRunResultSchema = z.object({
  run: RunSummarySchema,                          // the new read-only run (status "imported")
  sources: z.array(z.object({ file: z.string(), kind: z.string(), count: z.number().int() })), // files read, with episodes/rows/lines each
  skipped: z.array(z.string()),                   // files looked at and left out, with the reason
  warnings: z.array(z.string()),
});
export type ImportRunResult = z.infer<typeof ImportRunResultSchema>;

// ───────────────────────────── the method table ─────────────────────────────

function method<Req extends z.ZodType, Res extends z.ZodType>(request: Req, response: Res, doc: string) {
  return { request, response, doc };
}

/**
 * Every API method: namespace → method → { request, response, doc }.
 * Wire name of a method is "namespace.method" (e.g. "runs.create").
 */
export const apiContract = {
  projects: {
    create: method(z.object({ path: PathString, name: z.string().min(1).max(200).optional() }).strict(), ProjectInfoSchema,
      'Create a new project folder (must be empty or absent) and open it.'),
    open: method(z.object({ path: PathString }).strict(), ProjectInfoSchema,
      'Open an existing project folder (takes its lock). When another process holds it: serve and the app open it read-only, '
      + 'to watch (ProjectInfo.readOnly, holder); the CLI refuses.'),
    recent: method(Empty, z.object({ projects: z.array(RecentProjectSchema) }),
      'Recently opened projects, newest first.'),
    info: method(Empty, z.object({ project: ProjectInfoSchema.nullable() }),
      'The open project, or null.'),
    close: method(Empty, z.object({ closed: z.boolean() }),
      'Close the open project (stops nothing: refuses while runs are active).'),
    doctor: method(z.object({ path: PathString.optional(), repair: z.boolean().default(false) }).strict(), DoctorReportSchema,
      'Check a project (default: the open one): damaged runs, moved-aside files, stale locks, temp leftovers; repair fixes what is safe, never deletes data.'),
  },
  runs: {
    create: method(z.object({
      preset: z.string().min(1).optional(),                      // start from a method preset...
      config: JsonObject.optional(),                             // ...and/or a (partial) RunConfig input merged on top
      size: SizeSchema.optional(),                               // preset size
      set: z.record(z.string(), z.unknown()).optional(),         // dotted-path overrides, e.g. { "stages.rl.steps": 10 }
      name: z.string().min(1).max(200).optional(),
      start: z.boolean().default(false),                         // start it right away
    }).strict(), RunInfoSchema, 'Create a run from a preset and/or a config; the config is validated and saved resolved.'),
    validateConfig: method(z.object({
      preset: z.string().min(1).optional(), config: JsonObject.optional(), size: SizeSchema.optional(),
      set: z.record(z.string(), z.unknown()).optional(),
    }).strict(), z.object({ ok: z.boolean(), config: RunConfigSchema.nullable(), stages: z.array(z.string()), issues: z.array(ConfigIssueSchema) }),
      'Resolve and validate a config without creating a run (for the new-run form).'),
    estimate: method(z.object({
      preset: z.string().min(1).optional(), config: JsonObject.optional(), size: SizeSchema.optional(),
      set: z.record(z.string(), z.unknown()).optional(),
    }).strict(), RunEstimateSchema,
      'How long a run of this config would take, per stage, from earlier runs of the open project and the bench; whether a bootstrap base must be trained.'),
    list: method(z.object({
      status: z.array(RunStatusSchema).optional(),
      offset: Offset, limit: pageLimit(1000, 100000),
    }).strict().default({ offset: 0, limit: 1000 }), z.object({ runs: z.array(RunSummarySchema), total: z.number().int() }),
      'Runs of the open project, newest first.'),
    get: method(z.object({ runId: RunId }).strict(), RunInfoSchema, 'One run with its resolved config.'),
    start: method(z.object({ runId: RunId }).strict(), RunSummarySchema, 'Start a created run in an engine process.'),
    stop: method(z.object({ runId: RunId }).strict(), RunSummarySchema, 'Ask a running run to stop after the current step.'),
    resume: method(z.object({
      runId: RunId,
      set: z.record(z.string(), z.unknown()).optional(),   // execution settings to change first (run-config.ts RESUME_SETTABLE)
    }).strict(), RunSummarySchema, 'Resume a stopped or failed run from its last completed stage; `set` changes execution settings ' +
      '(memory layout, rollout batch size: RESUME_SETTABLE) first, and any other key is refused.'),
    delete: method(z.object({ runId: RunId }).strict(), z.object({ deleted: z.boolean() }), 'Delete a run that is not active (its folder is removed).'),
    events: method(z.object({
      runId: RunId, types: z.array(z.string()).optional(), offset: Offset, limit: pageLimit(500, 10000),
    }).strict(), z.object({ events: z.array(RunEventSchema), total: z.number().int(), skipped: z.number().int() }),
      'Past events of a run from events.jsonl (log pane history); live ones come by subscription.'),
    configSchema: method(Empty, z.object({ schema: JsonObject, defaults: RunConfigSchema }),
      'JSON Schema of RunConfig (for generating the new-run form) and the default config.'),
    presets: method(Empty, z.object({ presets: z.array(PresetInfoSchema) }), 'Method presets.'),
    samples: method(z.object({ runId: RunId, stage: z.string().optional(), offset: Offset, limit: pageLimit(50, 1000) }).strict(), z.object({
      samples: z.array(z.object({
        stage: z.string(), step: z.number(), time: z.number(), prompt: z.string(), target: z.string(), generated: z.string(), wellFormed: z.boolean(),
      })),
      total: z.number().int(),
    }), 'Sample generations written during long stages (samples/<stage>.jsonl): the model\'s reply to a held-out prompt beside the target, newest first.'),
    update: method(z.object({
      runId: RunId,
      name: z.string().trim().min(1).max(200).optional(),                       // display name
      tags: z.array(z.string().trim().min(1).max(50).regex(/^[^,]+$/, 'a tag without commas')).max(50).optional(), // replaces the tags
      notes: z.string().max(20_000).optional(),                                 // replaces the notes
    }).strict(), RunSummarySchema, 'Rename a run, set its tags or notes (also while it runs).'),
    exportBundle: method(z.object({
      runId: RunId, to: z.literal('spa-ragen').default('spa-ragen'), out: PathString, model: PathString.optional(),
      values: z.enum(['run', 'paper']).default('run'),   // run: the run's own settings; paper: the SPA release's (docs/scale-out.md)
    }).strict(), ExportBundleResultSchema,
      'Export a run as a SPA/RAGEN bundle (SFT parquet, Hydra config, RAGEN env, launch script) into a new folder.'),
    import: method(z.object({ path: PathString, name: z.string().min(1).max(200).optional() }).strict(), ImportRunResultSchema,
      'Import a finished SPA/RAGEN run (recorder JSONL, stage-1 files, verl metrics, W&B table) as a read-only run.'),
  },
  envs: {
    list: method(Empty, z.object({ envs: z.array(EnvInfoSchema) }), 'Registered environments.'),
    describe: method(z.object({ id: Id }).strict(), EnvDescriptionSchema, 'One environment with its documentation sections.'),
    render: method(z.object({
      env: EnvConfigSchema,
      seed: z.number().int().default(0),
      template: TemplateRefSchema.optional(),
    }).strict(), RenderedPuzzleSchema, 'Sample a puzzle (seeded) and render it as a board and as the prompt text.'),
  },
  templates: {
    list: method(Empty, z.object({ templates: z.array(TemplateListItemSchema) }), 'Presets and saved templates.'),
    get: method(z.object({ name: Id, hash: z.string().min(1).optional() }).strict(), TemplateVersionSchema,
      'A template version (latest saved, or the preset, when hash is omitted).'),
    save: method(z.object({
      name: TemplateNameSchema, source: z.string().min(1).max(1_000_000),
      description: z.string().max(2000).default(''), parent: z.string().optional(),
    }).strict(), z.object({ version: TemplateVersionSchema, created: z.boolean(), diagnostics: z.array(TemplateDiagnosticSchema) }),
      'Save a new immutable version (templates/<name>@<hash>.json); saving identical text returns the existing version.'),
    versions: method(z.object({ name: Id }).strict(), z.object({ versions: z.array(TemplateVersionMetaSchema) }),
      'Saved versions of a template, newest first.'),
    preview: method(z.object({
      source: z.string().max(1_000_000).optional(),              // unsaved text from the editor...
      name: Id.optional(), hash: z.string().optional(),          // ...or a saved/preset template
      env: EnvConfigSchema,
      seed: z.number().int().default(0),
      responseFormat: z.enum(['plain', 'world-model']).default('world-model'),
    }).strict(), TemplatePreviewSchema, 'Render a template against a sampled state (errors with line and column).'),
    checkpoints: method(z.object({ runId: RunId }).strict(),
      z.object({ runId: z.string(), latest: z.string().nullable(), checkpoints: z.array(CheckpointInfoSchema) }),
      'Checkpoints of a run, oldest first, and the latest policy checkpoint (the default of templates.perplexity).'),
    perplexity: method(z.object({
      runId: RunId,
      checkpoint: CheckpointName.optional(), // default: the latest
      source: z.string().min(1).max(1_000_000).optional(),       // unsaved text from the editor...
      name: Id.optional(), hash: z.string().min(1).optional(),   // ...or a saved/preset template
      env: EnvConfigSchema,
      samples: z.number().int().min(1).max(256).default(8),      // sampled states, one row each
      seedStart: z.number().int().optional(),                    // default: the run's seeds.evalStart
      timeoutSeconds: z.number().int().min(1).max(3600).default(600),
    }).strict(), TemplatePerplexitySchema,
      'State perplexity of a template (editor text or name) under a checkpoint of a run, on sampled true states; computed in a child process.'),
  },
  rollouts: {
    query: method(RolloutQuerySchema, z.object({ episodes: z.array(EpisodeSummarySchema), total: z.number().int() }),
      'Filter and page episode summaries from the rollout index (never loads episode files).'),
    facets: method(z.object({ runId: RunId }).strict(), RolloutFacetsSchema, 'Stages with episode counts and step ranges.'),
    get: method(z.object({ runId: RunId, id: z.string().min(1) }).strict(), EpisodeRecordSchema, 'One full episode.'),
    actionFrames: method(z.object({ runId: RunId, id: z.string().min(1) }).strict(), z.object({
      turns: z.array(z.object({ turn: z.number().int(), actions: z.array(z.string()), boards: z.array(BoardSchema).nullable() })),
    }), 'The board after each executed action of each turn (a multi-action turn as several replay frames); null for a turn that does not replay.'),
  },
  datasets: {
    query: method(z.object({
      runId: RunId, split: z.enum(['train', 'val']).default('train'), offset: Offset, limit: pageLimit(50, 1000),
    }).strict(), z.object({ rows: z.array(SftRowSchema), total: z.number().int(), skipped: z.number().int() }),
      'Page SFT rows (original and corrected response side by side).'),
    stats: method(z.object({ runId: RunId }).strict(), z.object({ stats: DatasetStatsSchema.nullable() }),
      'Row counts and drop reasons of the self-play filter (null when the run has no dataset yet).'),
  },
  metrics: {
    names: method(z.object({ runIds: z.array(RunId).min(1).max(100) }).strict(),
      z.object({ names: z.array(z.string()), stages: z.array(z.string()) }), 'Metric names logged by these runs.'),
    query: method(z.object({
      runIds: z.array(RunId).min(1).max(100),
      names: z.array(z.string().min(1)).min(1).max(100),
      stage: z.string().optional(),
      x: MetricXSchema.default('step'),
      xMin: z.number().optional(),
      xMax: z.number().optional(),
      maxPoints: z.number().int().min(2).max(100_000).default(1000), // buckets per series
    }).strict(), z.object({ series: z.array(MetricSeriesSchema) }),
      'Series per (run, stage, name), downsampled into buckets keeping min/max.'),
  },
  evals: {
    list: method(z.object({ runId: RunId }).strict(), z.object({ results: z.array(EvalResultSchema) }), 'Evaluation results of a run.'),
  },
  studies: {
    list: method(Empty, z.object({ studies: z.array(StudySummarySchema) }),
      'Studies of the open project (grids of runs started with studies.start or `spa-workbench study run`) with status and progress.'),
    start: method(z.object({
      name: StudyNameSchema,
      methods: z.array(z.string().min(1)).min(1).max(100).optional(),   // method presets (runs.presets ids)
      envs: z.array(z.string().min(1)).min(1).max(100).optional(),      // env ids (envs.list)
      seeds: z.array(z.number().int()).min(1).max(1000).optional(),      // run seeds (seeds.base)
      size: PresetSizeSchema.optional(),
      set: z.record(z.string(), z.unknown()).optional(),                 // dotted-path overrides for every run, like `--set`
      // cells recorded elsewhere ("method:env:seed", e.g. from docs/results on another machine): not run, counted as done
      skip: z.array(z.string().regex(/^[^:]+:[^:]+:-?\d+$/)).max(10_000).optional(),
    }).strict(), StudySummarySchema,
      'Start a study (a grid of runs methods × envs × seeds, run one after another), or resume an existing one by name: completed runs are ' +
        'skipped, stopped or failed ones resumed. With only a name, the saved grid is used.'),
    stop: method(z.object({ name: StudyNameSchema }).strict(), StudySummarySchema,
      'Stop a running study: its current run is asked to stop and no further run is started (studies.start resumes it).'),
    table: method(z.object({ name: StudyNameSchema }).strict(), StudyTableSchema,
      'The paper-style Pass@1 / Pass@k table of a study, computed now from its runs (pooled over seeds, 95% intervals).'),
  },
  system: {
    info: method(Empty, SystemInfoSchema, 'Host, versions, compute backends and paths.'),
    importModel: method(z.object({ file: PathString, out: PathString.optional() }).strict(),
      z.object({ folder: z.string(), parameters: z.number(), bytes: z.number(), seconds: z.number(), summary: z.string() }),
      'Import a llama GGUF file into a Hugging Face model folder (`spa-workbench model import`, in a child process; ' +
      'out: default beside the file, named after it); returns the folder.'),
  },
  inspect: {
    runTemplate: method(z.object({ runId: RunId }).strict(), RunTemplateSchema,
      "The template a run used (its pinned template.json) with its hash, for opening it in the editor."),
    systemMetrics: method(z.object({ runId: RunId, maxPoints: z.number().int().min(2).max(100_000).default(2000) }).strict(),
      z.object({ samples: z.array(SystemSampleSchema), total: z.number().int() }),
      'CPU, memory and GPU samples the engine recorded while the run ran (system.jsonl), evenly thinned to maxPoints.'),
    tokenHistograms: method(z.object({
      runId: RunId, stage: z.string().default('rl'), fields: z.array(TokenFieldSchema).min(1).default(['advantages', 'logprobs']),
      bins: z.number().int().min(2).max(200).default(24),
    }).strict(), z.object({
      steps: z.array(z.object({ step: z.number().int(), episodes: z.number().int(), histograms: z.record(z.string(), HistogramSchema.nullable()) })),
      range: z.record(z.string(), z.tuple([z.number(), z.number()]).nullable()), // per field, shared by every step (comparable bins)
    }), 'Histograms of the per-token statistics stored with RL episodes, per step (same bins across steps).'),
  },
  probe: {
    turn: method(z.object({
      runId: RunId,
      checkpoint: CheckpointName.optional(), // default: the latest
      seed: z.number().int().optional(),                          // a puzzle of the run's env...
      episodeId: z.string().min(1).optional(),                    // ...or a saved episode: its seed, and its responses before `turn` as history
      turn: z.number().int().nonnegative().default(0),            // with episodeId: the turn to probe
      history: z.array(z.string().max(100_000)).max(100).optional(), // responses already applied (each executes its <answer>)
      actions: z.array(z.string().min(1)).max(20).optional(),      // an action of your choice: the model predicts its next state
      temperature: z.number().min(0).max(5).default(0),           // 0 = greedy
      sampleSeed: z.number().int().default(0),
      timeoutSeconds: z.number().int().min(1).max(3600).default(300),
    }).strict(), ProbeResultSchema,
      'World-model probe: the model writes its turn on a puzzle (its observation and prediction against the truth), and predicts the next state ' +
        'for an action you give; computed in a child process.'),
  },
} as const;

// ───────────────────────────── derived types ─────────────────────────────

export type ApiContract = typeof apiContract;
export type ApiNamespace = keyof ApiContract;
type MethodsOf<N extends ApiNamespace> = ApiContract[N];
type Spec = { request: z.ZodType; response: z.ZodType; doc: string };

/** "runs.create" | "projects.open" | ... */
export type ApiMethodName = { [N in ApiNamespace]: `${N & string}.${keyof MethodsOf<N> & string}` }[ApiNamespace];

type SpecOf<M extends ApiMethodName> =
  M extends `${infer N}.${infer K}`
    ? N extends ApiNamespace ? K extends keyof MethodsOf<N> ? MethodsOf<N>[K] extends Spec ? MethodsOf<N>[K] : never : never : never
    : never;

/** What a caller passes (defaults optional). */
export type ApiRequest<M extends ApiMethodName> = z.input<SpecOf<M>['request']>;
/** The request after validation (defaults filled in): what the dispatcher's handlers receive. */
export type ApiRequestParsed<M extends ApiMethodName> = z.output<SpecOf<M>['request']>;
/** What a caller gets back. */
export type ApiResponse<M extends ApiMethodName> = z.output<SpecOf<M>['response']>;

type Fn<S extends Spec> = undefined extends z.input<S['request']>
  ? (request?: z.input<S['request']>) => Promise<z.output<S['response']>>
  : (request: z.input<S['request']>) => Promise<z.output<S['response']>>;

/** The typed API: `await api.runs.create({ preset: 'spa', size: 'quick' })`. */
export type WorkbenchApi = {
  [N in ApiNamespace]: { [K in keyof MethodsOf<N>]: MethodsOf<N>[K] extends Spec ? Fn<MethodsOf<N>[K]> : never };
};

/** All wire method names, for clients that build the nested object (e.g. with a Proxy). */
export function apiMethodNames(): ApiMethodName[] {
  const names: string[] = [];
  for (const [ns, methods] of Object.entries(apiContract)) for (const m of Object.keys(methods)) names.push(`${ns}.${m}`);
  return names as ApiMethodName[];
}

/** The request/response schemas of a wire method name, or undefined. */
export function methodSpec(name: string): Spec | undefined {
  const dot = name.indexOf('.');
  if (dot < 0) return undefined;
  const nsName = name.slice(0, dot);
  // own keys only: "__proto__.toString" or "constructor.name" are unknown methods, not Object's members
  if (!Object.prototype.hasOwnProperty.call(apiContract, nsName)) return undefined;
  const ns = (apiContract as Record<string, Record<string, Spec>>)[nsName];
  if (!ns || !Object.prototype.hasOwnProperty.call(ns, name.slice(dot + 1))) return undefined;
  return ns[name.slice(dot + 1)];
}

// ───────────────────────────── events ─────────────────────────────

/** Project-level events: the run list changed, a run's status changed, an engine died... */
export const ProjectEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('project'), time: z.number(), project: ProjectInfoSchema.nullable() }),       // opened / closed / changed
  z.object({ type: z.literal('runs-changed'), time: z.number(), runIds: z.array(z.string()) }),          // created / deleted / summary changed
  z.object({ type: z.literal('run-status'), time: z.number(), runId: z.string(), status: RunStatusSchema, reason: z.string().nullable() }),
  z.object({ type: z.literal('templates-changed'), time: z.number(), name: z.string() }),
  z.object({
    type: z.literal('engine-exit'), time: z.number(), runId: z.string(), code: z.number().nullable(), signal: z.string().nullable(), reason: z.string(),
  }),
  // started, next run, stopped, finished
  z.object({ type: z.literal('study-changed'), time: z.number(), name: z.string(), status: StudyStatusSchema, progress: StudyProgressSchema }),
]);
export type ProjectEvent = z.infer<typeof ProjectEventSchema>;

/** A subscription topic: everything about the project, or the live events of one run. */
export const EventTopicSchema = z.union([
  z.object({ kind: z.literal('project') }).strict(),
  z.object({ kind: z.literal('run'), runId: RunId }).strict(),
]);
export type EventTopic = z.infer<typeof EventTopicSchema>;

export const WorkbenchEventSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('project'), event: ProjectEventSchema }),
  z.object({ kind: z.literal('run'), runId: z.string(), event: RunEventSchema }),
]);
export type WorkbenchEvent = z.infer<typeof WorkbenchEventSchema>;

export type Unsubscribe = () => void;

/** What the UI holds: the typed API plus event subscription. Every transport gives one. */
export type WorkbenchClient = WorkbenchApi & {
  subscribe(topic: EventTopic, listener: (event: WorkbenchEvent) => void): Unsubscribe;
  /** Release the transport (sockets, listeners). */
  close(): void;
};

// ───────────────────────────── wire protocol (WebSocket, IPC) ─────────────────────────────

/** Client → host. `subscribe`/`unsubscribe` manage event topics; `id` correlates replies. */
export const WireRequestSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('call'), id: z.number().int(), method: z.string(), params: z.unknown().optional() }),
  z.object({ type: z.literal('subscribe'), id: z.number().int(), topic: EventTopicSchema }),
  z.object({ type: z.literal('unsubscribe'), id: z.number().int(), subscription: z.number().int() }),
]);
export type WireRequest = z.infer<typeof WireRequestSchema>;

/** Host → client: a reply (result or error, exactly once per request id) or a pushed event. */
export const WireResponseSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('result'), id: z.number().int(), result: z.unknown() }),
  z.object({ type: z.literal('error'), id: z.number().int(), error: ApiErrorSchema }),
  z.object({ type: z.literal('event'), subscription: z.number().int(), event: WorkbenchEventSchema }),
]);
export type WireResponse = z.infer<typeof WireResponseSchema>;

export { ApiErrorSchema };
export type { ApiError } from './records.js';
