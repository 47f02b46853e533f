// Live state perplexity of a prompt template under one checkpoint of a run: how surprised that
// model is by the TRUE state text when it is written with this template. Used by
// `spa-workbench template perplexity` and, through a child process running that command, by the
// API method templates.perplexity (the template editor's "State perplexity" panel).
//
// Rows (one per sampled state, seeds seedStart … seedStart+samples-1): a fresh episode of the env
// with the template (world-model response format), i.e. the system message and the first user
// message, then an assistant turn written by `randomWellFormedResponse(session, new Rng(seed))`:
//   <think><observation>\nTRUE STATE\n</observation>\nI will try …\n<prediction>\nTRUE NEXT STATE\n</prediction></think><answer>…</answer>
// where both states are rendered with the template. The perplexity is statePerplexity
// (core/train/perplexity.ts): exp(mean NLL of the observation and prediction contents).
//
// This module's static imports are free of TF.js (the API host imports the checkpoint listing);
// the model is loaded lazily inside templatePerplexity.
import * as path from 'node:path';
import { createEnv, listEnvs } from '../envs/index.js';
import { Rng } from '../util/rng.js';
import { EpisodeSession, randomWellFormedResponse, type ChatMessage } from '../prompts/session.js';
import { TemplateError, validateTemplate, type PromptTemplate } from '../prompts/template.js';
import { resolveTemplateRef } from '../prompts/resolve-template.js';
import { ProjectView, type StoredTemplateVersion } from '../storage/project-view.js';
import { WorkbenchError } from '../api/errors.js';

export type TemplatePerplexityErrorCode = 'NotFound' | 'ValidationError' | 'CorruptData';

export interface TemplatePerplexityErrorDetails {
  where: string;
  expected?: string;
  received?: string;
  hint?: string;
  issues?: Array<{ path: string; message: string }>;
}

/** A failure with what was expected, what arrived and where (maps 1:1 onto an API error). */
export class TemplatePerplexityError extends Error {
  constructor(readonly code: TemplatePerplexityErrorCode, message: string, readonly details: TemplatePerplexityErrorDetails) {
    super(message);
    this.name = code;
  }
}

export interface CheckpointInfo {
  name: string;                 // folder name under runs/<runId>/checkpoints/
  dir: string;                  // absolute folder
  stage: string | null;         // from manifest.json
  step: number | null;
  created: string | null;       // ISO time from manifest.json
  role: 'policy' | 'critic';    // critic checkpoints (value models) are never the default
}

export type TemplateInput = { source: string } | { name: string; hash?: string };

export interface TemplatePerplexityOptions {
  project: string;
  runId: string;
  /** Folder name under runs/<runId>/checkpoints/ (default: the run's latest policy checkpoint). */
  checkpoint?: string;
  env: { id: string; options?: Record<string, unknown> };
  /** Raw template text (JSON), or a preset / saved template name (optionally `name@hash`, or with `hash`). */
  template: TemplateInput;
  /** Sampled states (one row each). Default 8. */
  samples?: number;
  /** First seed (default: the run's seeds.evalStart when run.json says, else 0). */
  seedStart?: number;
  /** TF.js backend: auto (default: the run's config.backend), tensorflow-gpu, tensorflow, wasm, cpu. */
  backend?: string;
}

export interface TemplatePerplexityResult {
  perplexity: number;
  meanNll: number;
  tokens: number;               // state-content tokens scored
  rows: number;
  samples: number;
  seedStart: number;
  runId: string;
  checkpoint: CheckpointInfo;
  template: { name: string; hash: string; from: 'text' | 'saved' | 'preset' };
  env: { id: string; options: Record<string, unknown> };
  backend: string;
  maxContext: number;           // the checkpoint's context (tokens)
  longestRow: number;           // tokens of the longest row
  wallSeconds: number;          // whole call: checkpoint load + scoring
}

export const MAX_SAMPLES = 256;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const CHECKPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

function fail(code: TemplatePerplexityErrorCode, message: string, details: TemplatePerplexityErrorDetails): never {
  throw new TemplatePerplexityError(code, message, details);
}

function listNames(names: string[], max = 12): string {
  if (names.length === 0) return '(none)';
  return names.length > max ? `${names.slice(0, max).join(', ')} … (${names.length} in all)` : names.join(', ');
}

// ───────────────────────── runs and checkpoints ─────────────────────────

/** The run folder, or a NotFound error listing the project's runs. */
export function runFolder(project: string, runId: string): string {
  const view = new ProjectView(project);
  if (!view.exists()) {
    fail('NotFound', `project folder ${view.dir} does not exist`, {
      where: 'project', expected: 'a project folder (with workbench.json and runs/)', received: view.dir,
    });
  }
  if (!RUN_ID.test(runId)) {
    fail('ValidationError', `run id ${JSON.stringify(runId)} is not a run id`, {
      where: 'runId',
      expected: 'letters, digits, ".", "_" or "-" (at most 128 characters)',
      received: JSON.stringify(runId),
    });
  }
  const dir = view.runDir(runId);
  if (!dir) {
    const runsDir = path.join(view.dir, 'runs');
    fail('NotFound', `run ${JSON.stringify(runId)} does not exist in ${view.dir}; runs: ${listNames(view.runIds())}`, {
      where: 'runId', expected: `a run folder under ${runsDir}`, received: JSON.stringify(runId), hint: 'list runs with `spa-workbench list ' +
        '--project DIR` or runs.list',
    });
  }
  return dir;
}

/** Checkpoints of a run (folders with config.json under checkpoints/), oldest first. */
export function listRunCheckpoints(project: string, runId: string): CheckpointInfo[] {
  const found = new ProjectView(project).checkpoints(runFolder(project, runId)).map(({ name, dir, manifest: m, mtimeMs }) => {
    const created = typeof m?.created === 'string' ? m.created : null;
    return {
      name, dir,
      stage: typeof m?.stage === 'string' ? m.stage : null,
      step: typeof m?.step === 'number' ? m.step : null,
      created,
      role: /critic/i.test(name) ? 'critic' as const : 'policy' as const,
      mtime: created && Number.isFinite(Date.parse(created)) ? Date.parse(created) : mtimeMs,
    };
  });
  found.sort((a, b) => a.mtime - b.mtime || a.name.localeCompare(b.name));
  return found.map(({ mtime: _m, ...c }) => c);
}

/** The newest policy checkpoint (what a later stage or the evaluation would use), or null. */
export function latestCheckpoint(list: CheckpointInfo[]): CheckpointInfo | null {
  const policies = list.filter((c) => c.role === 'policy');
  return policies[policies.length - 1] ?? null;
}

/** A checkpoint by name, or the latest; NotFound errors list the ones that exist. */
export function findCheckpoint(project: string, runId: string, name?: string): CheckpointInfo {
  const list = listRunCheckpoints(project, runId);
  const names = list.map((c) => c.name);
  if (name === undefined || name === '') {
    const latest = latestCheckpoint(list);
    if (!latest) {
      fail('NotFound', `run ${runId} has no checkpoint yet${names.length ? ` (only critic checkpoints: ${listNames(names)})` : ''}; run (or ` +
        `resume) it until a stage writes one`, {
        where: 'checkpoint', expected: `a folder with config.json under runs/${runId}/checkpoints/`, received: names.length ? listNames(names) : 'none',
      });
    }
    return latest;
  }
  if (!CHECKPOINT_NAME.test(name)) {
    fail('ValidationError', `checkpoint ${JSON.stringify(name)} is not a checkpoint folder name; checkpoints of run ${runId}: ${listNames(names)}`, {
      where: 'checkpoint', expected: `one of: ${listNames(names)}`, received: JSON.stringify(name),
    });
  }
  const hit = list.find((c) => c.name === name);
  if (!hit) {
    fail('NotFound', `run ${runId} has no checkpoint ${JSON.stringify(name)}; it has: ${listNames(names)}`, {
      where: 'checkpoint', expected: `one of: ${listNames(names)}`, received: JSON.stringify(name),
    });
  }
  return hit;
}

/** What run.json says about the run (null when it has none, e.g. a run written by a test). */
function readRunConfig(project: string, runDir: string): { evalStart?: number; backend?: string } | null {
  const config = new ProjectView(project).runRecord(runDir)?.config as { seeds?: { evalStart?: unknown }; backend?: unknown } | undefined;
  if (!config) return null;
  const evalStart = config.seeds?.evalStart;
  const backend = config.backend;
  return { ...(typeof evalStart === 'number' ? { evalStart } : {}), ...(typeof backend === 'string' ? { backend } : {}) };
}

// ───────────────────────── templates ─────────────────────────

function templateIssues(issues: Array<{ part?: string; message: string; line?: number; column?: number }>): Array<{ path: string; message: string }> {
  return issues.map((i) => ({ path: i.part ?? '', message: `${i.line ? `line ${i.line} column ${i.column}: ` : ''}${i.message}` }));
}

/** Raw text, a saved version (name, name@hash) or a preset (including the tiny-* ones). */
export function resolveTemplateInput(
  project: string, input: TemplateInput,
): { template: PromptTemplate; name: string; hash: string; from: 'text' | 'saved' | 'preset' } {
  if ('source' in input) {
    const r = validateTemplate(input.source);
    if (!r.ok) {
      const first = r.issues[0]!;
      const at = `${first.part ? `${first.part}: ` : ''}${first.line ? `line ${first.line} column ${first.column}: ` : ''}`;
      const more = r.issues.length > 1 ? ` (and ${r.issues.length - 1} more)` : '';
      fail('ValidationError', `the template does not validate: ${at}${first.message}${more}`, {
        where: 'template source',
        expected: 'a valid template (JSON with name, responseFormat, parts)',
        received: `${r.issues.length} problem(s)`,
        issues: templateIssues(r.issues),
      });
    }
    return { template: r.template, name: r.template.name, hash: r.hash, from: 'text' };
  }
  const view = new ProjectView(project);
  const saved = (name: string) => (/^[a-z0-9][a-z0-9-]{0,63}$/.test(name) ? view.templateVersions(name) : []);
  let r: ReturnType<typeof resolveTemplateRef<StoredTemplateVersion>>;
  try { r = resolveTemplateRef(input, saved); } catch (err) {
    if (!(err instanceof WorkbenchError)) throw err;
    const d = err.details;
    fail('NotFound', err.message, {
      where: d.where ?? 'template', ...(d.expected ? { expected: d.expected } : {}), ...(d.received ? { received: d.received } : {}),
    });
  }
  if (r.kind === 'preset') return { template: r.template, name: r.name, hash: r.hash, from: 'preset' };
  const v = validateTemplate(r.version.source);
  if (!v.ok) {
    const file = `templates/${r.version.file}`;
    fail('CorruptData', `${file} no longer validates: ${v.issues[0]?.message}`, { where: file, issues: templateIssues(v.issues) });
  }
  return { template: v.template, name: r.name, hash: v.hash, from: 'saved' };
}

// ───────────────────────── rows ─────────────────────────

export interface PerplexityRow { seed: number; messages: ChatMessage[]; stateText: string }

/** The rows described at the top of this file: one per seed, true states rendered with the template. */
export function templatePerplexityRows(template: PromptTemplate, env: { id: string; options?: Record<string, unknown> }, seeds: number[]): PerplexityRow[] {
  if (!listEnvs().includes(env.id)) {
    // aliases are accepted by createEnv: only reject when it does too
    try { createEnv(env.id, env.options ?? {}); } catch (err) {
      fail('NotFound', `env ${JSON.stringify(env.id)} is not registered; ` + `available: ${listEnvs().join(', ')}`, {
        where: 'env.id',
        expected: listEnvs().join(' | '),
        received: JSON.stringify(env.id),
        hint: (err as Error).message,
      });
    }
  }
  return seeds.map((seed) => {
    let session: EpisodeSession;
    let response: string;
    try {
      session = new EpisodeSession(createEnv(env.id, env.options ?? {}), template, { seed, responseFormat: 'world-model' });
      response = randomWellFormedResponse(session, new Rng(seed));
    } catch (err) {
      if (err instanceof TemplateError) {
        fail('ValidationError', `template ${JSON.stringify(template.name)} does not render for ${env.id} (seed ${seed}): ${err.message}`, {
          where: `template (${env.id}, seed ${seed})`,
          expected: "a template whose parts render with the env's variables",
          received: err.issues[0]?.message ?? err.message,
          issues: templateIssues(err.issues),
        });
      }
      const e = err as Error & { details?: Record<string, unknown> };
      fail('ValidationError', `env ${env.id} with options ${JSON.stringify(env.options ?? {})} (seed ${seed}): ${e.message}`, {
        where: 'env.options', expected: 'options the env accepts (see envs.describe)', received: JSON.stringify(env.options ?? {}),
      });
    }
    const stateText = session.stateText();
    if (!stateText.trim()) {
      fail('ValidationError', `template ${JSON.stringify(template.name)} renders an empty state for ${env.id} (seed ${seed}): there is no state ` +
        `text to score`, {
        where: 'template parts.state', expected: 'a state part that renders text (e.g. "{{ grid }}")', received: JSON.stringify(template.parts.state ?? null),
      });
    }
    return { seed, messages: [...session.messages(), { role: 'assistant' as const, content: response }], stateText };
  });
}

// ───────────────────────── the computation ─────────────────────────

export async function templatePerplexity(opts: TemplatePerplexityOptions): Promise<TemplatePerplexityResult> {
  const started = performance.now();
  const samples = opts.samples ?? 8;
  if (!Number.isInteger(samples) || samples < 1 || samples > MAX_SAMPLES) {
    fail('ValidationError', `samples: expected an integer from 1 to ${MAX_SAMPLES}, received ${String(samples)}`, {
      where: 'samples',
      expected: `1 … ${MAX_SAMPLES}`,
      received: String(samples),
    });
  }
  const runDir = runFolder(opts.project, opts.runId);
  const checkpoint = findCheckpoint(opts.project, opts.runId, opts.checkpoint);
  const runConfig = readRunConfig(opts.project, runDir);
  const seedStart = opts.seedStart ?? runConfig?.evalStart ?? 0;
  if (!Number.isSafeInteger(seedStart))
    fail('ValidationError', `seedStart: expected an integer, received ${String(seedStart)}`, {
      where: 'seedStart',
      expected: 'an integer',
      received: String(seedStart),
    });
  const resolved = resolveTemplateInput(opts.project, opts.template);
  const envOptions = opts.env.options ?? {};
  const rows = templatePerplexityRows(resolved.template, { id: opts.env.id, options: envOptions }, Array.from({ length: samples }, (_, i) => seedStart + i));

  // the run's compute backend (torch or TF.js), chosen as a run chooses it (core/train/runtime.ts)
  const { chooseCompute, loadRuntime } = await import('../train/runtime.js');
  const report = await chooseCompute(opts.backend ?? runConfig?.backend);
  const { formatChat } = await import('../model/chat.js');
  const { statePerplexity } = await import('../train/perplexity.js');
  let runtime;
  try {
    runtime = await loadRuntime(checkpoint.dir, { valueHead: false, trainable: false });
  } catch (err) {
    fail('CorruptData', `checkpoint ${checkpoint.name} of run ${opts.runId} could not be loaded: ${(err as Error).message}`, {
      where: checkpoint.dir,
      expected: 'a checkpoint folder (config.json, model.safetensors, tokenizer)',
      received: (err as Error).message,
    });
  }
  try {
    const maxContext = runtime.maxContext;
    let longestRow = 0;
    for (const row of rows) {
      const n = formatChat(row.messages, runtime.tokenizer).ids.length;
      longestRow = Math.max(longestRow, n);
      if (n > maxContext) {
        fail('ValidationError', `template ${JSON.stringify(resolved.name)} does not fit the model context: the row for ${opts.env.id} ` +
          `seed ${row.seed} is ${n} tokens (prompt + a turn with the state twice); checkpoint ${checkpoint.name} has a context of ${maxContext} ` +
            `tokens. Use a shorter template (e.g. a tiny-* preset), a smaller env, or a model with a longer context`, {
          where: `template (${opts.env.id}, seed ${row.seed})`, expected: `at most ${maxContext} tokens`, received: `${n} tokens`,
        });
      }
    }
    const result = await statePerplexity(runtime, rows, maxContext);
    if (result.rows !== rows.length || result.tokens === 0 || !Number.isFinite(result.perplexity)) {
      fail('ValidationError', `only ${result.rows} of ${rows.length} rows could be scored (${result.tokens} state tokens); the state text must be ` +
        `non-empty and fit the context`, {
        where: 'template', expected: `${rows.length} scored rows`, received: `${result.rows} rows, ${result.tokens} tokens`,
      });
    }
    return {
      perplexity: result.perplexity, meanNll: result.meanNll, tokens: result.tokens, rows: result.rows, samples, seedStart,
      runId: opts.runId, checkpoint, template: { name: resolved.name, hash: resolved.hash, from: resolved.from },
      env: { id: opts.env.id, options: envOptions }, backend: report.backend, maxContext, longestRow,
      wallSeconds: Math.round((performance.now() - started) / 10) / 100,
    };
  } finally {
    await runtime.dispose();
  }
}
