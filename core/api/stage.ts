// The stage contract: a run is an ordered list of stages executed in the engine process.
// core/engine owns execution (ordering, resume, events, process isolation); core/train and
// core/eval implement stages and register them in core/engine/stages.ts.
import type { RunConfig } from './run-config.js';
import type { EpisodeRecord, MetricPoint, RunEvent } from './records.js';

export interface StageContext {
  runId: string;
  runDir: string;                 // absolute path of runs/<id>/
  config: RunConfig;              // resolved config
  stage: string;                  // this stage's name
  /** Outputs of earlier completed stages (what each stage returned), by stage name. */
  previous: Record<string, StageOutput>;
  /** Cancelled when the user stops the run; stages check it between steps and return early. */
  signal: AbortSignal;
  /** Report progress (drives the UI progress bar and ETA). */
  progress(done: number, total: number, message?: string): void;
  /** Log scalars (appends to metrics.jsonl and streams to subscribers). */
  metric(step: number, values: Record<string, number>, extra?: Partial<Pick<MetricPoint, 'episodes'>>): void;
  /** Append an episode to rollouts/<file>.jsonl (indexed by byte offset) and stream its summary. */
  episode(file: string, record: EpisodeRecord): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
  checkpoint(step: number, path: string): void;
  /** Write a whole JSON file inside the run folder atomically (temp + rename). */
  writeJson(relPath: string, value: unknown): void;
  /** Append rows to a JSONL file inside the run folder; `sync` fsyncs it before returning (a kill after it keeps the rows). */
  appendJsonl(relPath: string, rows: unknown[], opts?: { sync?: boolean }): void;
  /** Read a JSON file inside the run folder, or null if absent. */
  readJson<T = unknown>(relPath: string): T | null;
  /**
   * Read a JSONL file inside the run folder ([] if absent). A line that does not parse (a torn
   * last line after a crash) is skipped and logged as a warning, never fatal (core/storage/jsonl.ts).
   */
  readJsonl<T = unknown>(relPath: string): T[];
  /**
   * The folder of a project-wide cache entry, <project>/cache/<kind>/<key> (not created): the one
   * place outside its run folder where a stage may write, for results that runs share (the
   * bootstrap's base model).
   */
  cacheDir(kind: string, key: string): string;
  /** Stage-local state for resume within a stage (e.g. last completed RL step). */
  saveState(state: Record<string, unknown>): void;
  loadState(): Record<string, unknown> | null;
}

/** What a stage hands to later stages (e.g. the checkpoint path it produced). JSON only. */
export type StageOutput = Record<string, unknown>;

export interface StageDefinition {
  name: string;                   // e.g. "bootstrap", "selfplay", "sft", "rl", "eval"
  title: string;                  // for the UI
  run(ctx: StageContext): Promise<StageOutput>;
}

/** Emitter used by the engine process to send events to its host. */
export type EmitEvent = (event: RunEvent) => void;
