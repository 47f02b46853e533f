// Envs written in Python (Gymnasium's reset/step on text), registered beside the TypeScript ones. An env is one .py file with
// one class (docs/envs.md shows a complete one); resources/python-envs/host.py serves it in a child process (python-host.ts).
//
// Where envs are found: resources/python-envs/envs/ (the built-in ones, e.g. textworld), then every directory or file in
// SPA_ENV_PATH (separated like PATH). The listing reads the files' syntax only (ids without importing anything); an env's
// declaration is read from its class on first use.
// Which Python runs an env: SPA_ENV_PYTHON when set, else the first of python3 (PATH) and /usr/bin/python3 that can import
// every module the class names in `requires` (TextWorld: the interpreter .ci/install-envs.sh installed it for).
//
// ## The Env an env file becomes (PythonEnv)
// Observation and state text: the class's state_text() (default: the last observation), as a string; gridText() is the same
// text, so templates show it through {{ grid }}. Actions: the class's admissible_commands() for the current state (default:
// its `actions` list); an action not among them is not sent to Python (info.actionIsValid false, nothing changes).
// getState() is {seed, options, actions}: setState replays them from the seeded reset, so an env must be deterministic given
// its seed (the checker verifies it). board(): the state text as a one-column board, one cell per line after normalisation
// (normalizeStateText), so world-model scoring on text is "exact after normalisation" with a per-line accuracy.
// Errors: a raise, crash or hang in Python throws PythonEnvError (env id, call, traceback); the run that called it fails and
// is resumable.
import { delimiter, dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Board } from '../api/records.js';
import type {
  CellLegend, Env, EnvBudget, EnvDefinition, EnvDocs, EnvSolution, ResetOptions, ResetResult, StateVocabulary, StepInfo, StepResult,
} from './types.js';
import { EnvError, show } from './errors.js';
import { validateOptions, type OptionSpec, type ResolvedOptions } from './options.js';
import { hashString } from '../util/rng.js';
import { PythonEnvError, PythonHost } from './python-host.js';

export { PythonEnvError } from './python-host.js';

/** One env file found by the listing. */
export interface PythonEnvEntry { id: string; file: string; title: string; requires: string[]; error?: string }

/** What the class declares (host.py's describe). */
interface Declaration {
  id: string;
  title?: string;
  docs?: Partial<EnvDocs>;
  options?: OptionSpec[];
  actions?: string[];
  rules?: string;
  instruction?: string;
  legend?: string;
  budget?: Partial<EnvBudget>;
  requires?: string[];
  timeout?: number;
  hasOracle: boolean;
  hasAdmissible: boolean;
  hasParser: boolean;
}

const DEFAULT_TIMEOUT_S = 30;
/** describe/create may import heavy modules (TextWorld: ~1-2 s) and generate a game: at least this long. */
const START_TIMEOUT_S = 120;
const DEFAULT_BUDGET: EnvBudget = { maxTurns: 5, maxActionsPerTurn: 1, maxActionsPerGame: 5 };

// ---------------------------------------------------------------- finding the host, the envs and a Python

let hostScriptCache: string | null = null;
let hostScriptFailure: { key: string; error: EnvError } | null = null;

function pythonList(): string[] {
  const explicit = process.env.SPA_ENV_PYTHON?.trim();
  if (explicit) return [explicit];
  return process.platform === 'win32' ? ['python', 'py'] : ['python3', '/usr/bin/python3'];
}

/** resources/python-envs/host.py: SPA_ENV_HOST, else the first existing one from this file upwards (asked of Python: no fs here). */
export function pythonHostScript(): string {
  const explicit = process.env.SPA_ENV_HOST?.trim();
  if (explicit) return explicit;
  if (hostScriptCache) return hostScriptCache;
  if (hostScriptFailure && hostScriptFailure.key === pythonList().join('|')) throw hostScriptFailure.error;
  const candidates: string[] = [];
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const c = join(dir, 'resources', 'python-envs', 'host.py');
    candidates.push(c.replace(/app\.asar([\\/])/, 'app.asar.unpacked$1'), c);
    dir = resolve(dir, '..');
  }
  const resourcesPath = (process as { resourcesPath?: string }).resourcesPath;
  if (resourcesPath) candidates.push(join(resourcesPath, 'python-envs', 'host.py'));
  for (const python of pythonList()) {
    const r = spawnSync(python, ['-c', 'import os, sys\nprint(next((p for p in sys.argv[1:] if os.path.isfile(p)), ""))', ...candidates],
      { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0 && r.stdout.trim()) return (hostScriptCache = r.stdout.trim());
  }
  const error = new EnvError('python envs: resources/python-envs/host.py was not found (or no Python answered)', {
    where: 'python env registry', expected: `a Python 3 among ${pythonList().join(', ')} and host.py under ${candidates[0]}`,
    hint: 'install Python 3, set SPA_ENV_PYTHON to it, or SPA_ENV_HOST to host.py',
  });
  hostScriptFailure = { key: pythonList().join('|'), error };   // asked once per interpreter list, not at every listEnvs()
  throw error;
}

/** Directories and files searched for env files: the built-in envs, then SPA_ENV_PATH. */
export function pythonEnvPath(): string[] {
  const extra = (process.env.SPA_ENV_PATH ?? '').split(delimiter).map((p) => p.trim()).filter((p) => p.length > 0).map((p) => resolve(p));
  return [join(dirname(pythonHostScript()), 'envs'), ...extra];
}

const listings = new Map<string, PythonEnvEntry[]>();

/**
 * The Python env files found (ids from the files' syntax; nothing imported), cached per search path and interpreter list.
 * Never throws: without a Python, there are no Python envs. A file that does not parse is listed with its `error`.
 */
export function listPythonEnvs(): PythonEnvEntry[] {
  let path: string[];
  try { path = pythonEnvPath(); } catch { return []; }
  const key = `${path.join('\n')}|${pythonList().join('|')}`;
  const cached = listings.get(key);
  if (cached) return cached;
  let entries: PythonEnvEntry[] = [];
  for (const python of pythonList()) {
    const r = spawnSync(python, [pythonHostScript(), '--list', ...path], { encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0) continue;
    try {
      const raw = JSON.parse(r.stdout) as Array<{ id: string; file: string; title?: string; requires?: string[]; error?: string }>;
      const seen = new Set<string>();
      entries = raw.filter((e) => { const fresh = !seen.has(e.id); seen.add(e.id); return fresh; }) // first on the path wins
        .map((e) => ({ id: e.id, file: e.file, title: e.title ?? e.id, requires: e.requires ?? [], ...(e.error ? { error: e.error } : {}) }));
    } catch { entries = []; }
    break;
  }
  listings.set(key, entries);
  return entries;
}

const interpreterFor = new Map<string, string | { missing: string }>();

/** The Python that can import `requires` (first on the list), or what is missing. */
function choosePython(requires: readonly string[]): string | { missing: string } {
  const key = `${pythonList().join('|')}|${requires.join(',')}`;
  const hit = interpreterFor.get(key);
  if (hit) return hit;
  let answer: string | { missing: string } = { missing: `no Python among ${pythonList().join(', ')} answered` };
  for (const python of pythonList()) {
    if (requires.length === 0) { answer = python; break; }
    const probe = 'import importlib.util, sys\nprint(",".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))';
    const r = spawnSync(python, ['-c', probe, ...requires],
      { encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0) continue;
    if (r.stdout.trim() === '') { answer = python; break; }
    answer = { missing: `${python} lacks ${r.stdout.trim()}` };
  }
  interpreterFor.set(key, answer);
  return answer;
}

// ---------------------------------------------------------------- hosts (one process per env file)

const hosts = new Map<string, PythonHost>();

function hostFor(entry: PythonEnvEntry, python: string): PythonHost {
  const key = `${entry.file}\n${entry.id}\n${python}`;
  const current = hosts.get(key);
  if (current?.alive) return current;
  const host = new PythonHost(entry.id, python, pythonHostScript(), entry.file);
  hosts.set(key, host);
  return host;
}

/** Stop every Python env process and forget listings and declarations (tests; a changed SPA_ENV_PATH). */
export function resetPythonEnvs(): void {
  for (const h of hosts.values()) h.retire('reset');
  hosts.clear();
  hostScriptCache = null;
  hostScriptFailure = null;
  listings.clear();
  interpreterFor.clear();
  definitions.clear();
}

function timeoutMs(decl: Declaration | null, start = false): number {
  const fromEnv = Number(process.env.SPA_ENV_TIMEOUT_S);
  const seconds = Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : decl?.timeout ?? DEFAULT_TIMEOUT_S;
  return Math.round((start ? Math.max(seconds, START_TIMEOUT_S) : seconds) * 1000);
}

// ---------------------------------------------------------------- text states

/** A state text in the form world-model scoring compares: lines trimmed, inner whitespace collapsed, lower case,
 *  blank lines and a trailing ">" prompt dropped. */
export function normalizeStateText(text: string): string {
  return text.split('\n').map((l) => l.replace(/\s+/g, ' ').trim().toLowerCase()).filter((l) => l.length > 0 && l !== '>').join('\n');
}

/** The one cell kind of a text board: a line of the state text. */
export const TEXT_LINE_CELL: CellLegend = { kind: 'line', symbol: '≡', label: 'line of the state text', glyphs: ['symbol'], entities: [] };

/**
 * A text state as a board: one row per normalised line (normalizeStateText), one column of kind 'line' whose value is a 31-bit
 * hash of the line, so the scorer's cell comparison is line equality (cellAccuracy: the share of lines equal in place).
 */
export function textBoard(envId: string, text: string): Board {
  const lines = normalizeStateText(text).split('\n').filter((l) => l.length > 0);
  return { env: envId, rows: lines.length, cols: 1, cells: lines.map(() => ['line']), values: lines.map((l) => [hashString(l) >>> 1]) };
}

/** The `{{ json }}` form of a text state is {"text": ...}: its text; any other text as it is. */
function unwrapJsonForm(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return text;
  try {
    const value = JSON.parse(trimmed) as { text?: unknown };
    return typeof value?.text === 'string' ? value.text : text;
  } catch {
    return text;
  }
}

function textVocabulary(envId: string, parse: (text: string) => string | null): StateVocabulary {
  const same = (_entities: unknown): string => '';
  return {
    cells: [{ ...TEXT_LINE_CELL, glyphs: [...TEXT_LINE_CELL.glyphs], entities: [] }],
    entities: [],
    forms: { spaCoordinates: same, coordinateListing: same, relations: same, json: (env) => JSON.stringify({ text: env.gridText() }) },
    decoyKinds: [],
    parse(text) {
      const canonical = parse(unwrapJsonForm(text));
      if (canonical === null || canonical.trim() === '') return null;
      return textBoard(envId, canonical);
    },
  };
}

// ---------------------------------------------------------------- the env

interface PythonEnvState {
  env: string; seed: number | null; options: ResolvedOptions; resetOptions: Record<string, unknown> | null; actions: string[]; started: boolean;
}

const finalizer = new FinalizationRegistry<{ host: PythonHost; handle: number }>(({ host, handle }) => {
  if (host.alive) { try { host.call('close', { handle }, 5000); } catch { /* the host is gone */ } }
});

/** A Python env instance behind the synchronous Env contract. */
export class PythonEnv implements Env<string, PythonEnvState> {
  readonly id: string;
  private readonly entry: PythonEnvEntry;
  private readonly python: string;
  private readonly decl: Declaration;
  private readonly options: ResolvedOptions;
  private host: PythonHost | null = null;
  private handle = 0;
  private seed: number | null = null;
  private resetOptions: Record<string, unknown> | null = null;
  private actions: string[] = [];
  private text = '';
  private legal: string[] = [];
  private started = false;
  private ended = false;
  /** The rules line the class gave for this instance's options (rules() method), if any. */
  rulesLine: string | null = null;

  constructor(entry: PythonEnvEntry, python: string, decl: Declaration, options: ResolvedOptions) {
    this.id = entry.id;
    this.entry = entry;
    this.python = python;
    this.decl = decl;
    this.options = options;
  }

  private call(op: string, request: Record<string, unknown>, start = false): Record<string, unknown> {
    if (!this.host || !this.host.alive) {
      this.host = hostFor(this.entry, this.python);
      this.handle = this.host.call('create', { options: this.options }, timeoutMs(this.decl, true)).handle as number;
      finalizer.register(this, { host: this.host, handle: this.handle });
    }
    return this.host.call(op, { handle: this.handle, ...request }, timeoutMs(this.decl, start));
  }

  private take(reply: Record<string, unknown>, op: string): void {
    if (typeof reply.text !== 'string') throw new PythonEnvError(this.id, op, `expected the state text as a string, got ${show(reply.text)}`);
    if (!Array.isArray(reply.legal)) throw new PythonEnvError(this.id, op, `expected the legal actions as a list, got ${show(reply.legal)}`);
    this.text = reply.text;
    this.legal = (reply.legal as unknown[]).map(String);
  }

  reset(opts: ResetOptions = {}): ResetResult<string> {
    this.seed = opts.seed ?? null;
    this.resetOptions = opts.options ?? null;
    const reply = this.call('reset', { seed: this.seed, options: this.resetOptions }, true);
    this.take(reply, 'reset');
    this.rulesLine = typeof reply.rules === 'string' ? reply.rules : null;
    this.actions = [];
    this.started = true;
    this.ended = false;
    const info = (reply.info ?? {}) as Record<string, unknown>;
    return { observation: this.text, info: { ...info, success: false, actionIsValid: true, actionIsEffective: false } };
  }

  step(action: string): StepResult<string> {
    if (!this.started) throw new EnvError('step() before reset()', { where: `env "${this.id}"`, hint: 'call reset() first' });
    if (this.ended) throw new EnvError('step() after the episode ended', { where: `env "${this.id}"`, hint: 'call reset() to start a new episode' });
    if (!this.legal.includes(action)) {
      return { observation: this.text, reward: 0, terminated: false, truncated: false,
        info: { success: false, actionIsValid: false, actionIsEffective: false } };
    }
    const before = this.text;
    const reply = this.call('step', { action });
    this.take(reply, 'step');
    this.actions.push(action);
    const info = (reply.info ?? {}) as Record<string, unknown>;
    const terminated = reply.terminated === true;
    const truncated = reply.truncated === true && !terminated;
    this.ended = terminated || truncated;
    const reward = typeof reply.reward === 'number' && Number.isFinite(reply.reward) ? reply.reward : 0;
    const full: StepInfo = {
      ...info,
      success: typeof info.success === 'boolean' ? info.success : info.won === true,
      actionIsValid: true,
      actionIsEffective: typeof info.actionIsEffective === 'boolean' ? info.actionIsEffective : this.text !== before,
    };
    return { observation: this.text, reward, terminated, truncated, info: full };
  }

  getState(): PythonEnvState {
    return { env: this.id, seed: this.seed, options: { ...this.options }, resetOptions: this.resetOptions, actions: [...this.actions], started: this.started };
  }

  /** Replays the seeded reset and the actions (envs must be deterministic given the seed). */
  setState(state: PythonEnvState): void {
    if (!state || state.env !== this.id || !Array.isArray(state.actions)) {
      throw new EnvError('invalid state', { where: `env "${this.id}" setState`, expected: `a state from getState() of ${this.id}`, received: show(state) });
    }
    if (JSON.stringify(state.options) !== JSON.stringify(this.options)) {
      throw new EnvError('invalid state', { where: `env "${this.id}" setState`, expected: `options ${show(this.options)}`,
        received: show(state.options), hint: 'create the env with the options of the state' });
    }
    if (!state.started) { this.started = false; return; }
    this.reset({ ...(state.seed !== null ? { seed: state.seed } : {}), ...(state.resetOptions ? { options: state.resetOptions } : {}) });
    for (const a of state.actions) {
      const r = this.step(a);
      if (!r.info.actionIsValid) {
        throw new PythonEnvError(this.id, 'setState',
          `replaying ${show(a)} failed: not legal after the replayed prefix (is the env deterministic given its seed?)`);
      }
    }
  }

  legalActions(): string[] { return [...this.legal]; }
  entities(): [] { return []; }
  board(): Board { return textBoard(this.id, this.text); }
  gridText(): string { return this.text; }

  /** The class's oracle() plan from the current state, or null when it has none. */
  oracle(): string[] | null {
    if (!this.decl.hasOracle || !this.started) return null;
    const reply = this.call('oracle', {});
    return Array.isArray(reply.actions) ? (reply.actions as unknown[]).map(String) : null;
  }
}

// ---------------------------------------------------------------- definitions

const definitions = new Map<string, EnvDefinition>();

const DOC_DEFAULTS: EnvDocs = {
  summary: 'A text environment written in Python.',
  actions: 'The admissible commands of the current state, as text.',
  observation: 'The state text the env returns (its state_text(), else the observation).',
  rewards: 'As the env returns them.',
  episodeEnd: 'terminated / truncated as the env returns them.',
  arguments: 'The options its class declares.',
};

function unavailable(entry: PythonEnvEntry, why: string): EnvDefinition {
  const fail = (): never => {
    throw new EnvError(`python env "${entry.id}" is unavailable`, {
      where: entry.file, received: why, hint: 'run .ci/install-envs.sh (docs/envs.md), or set SPA_ENV_PYTHON to a Python that has its `requires`',
    });
  };
  return {
    id: entry.id, title: entry.title,
    docs: { ...DOC_DEFAULTS, summary: `Unavailable here: ${why}` },
    options: [], actions: [], actionPattern: '<admissible command>', instruction: '', legend: '', budget: DEFAULT_BUDGET,
    vocabulary: textVocabulary(entry.id, normalizeStateText),
    create: fail,
  };
}

function checkDeclaration(entry: PythonEnvEntry, raw: unknown): Declaration {
  const d = raw as Declaration;
  const bad = (what: string, got: unknown): never => {
    throw new PythonEnvError(entry.id, 'describe', `the class declares ${what}; got ${show(got)} (docs/envs.md lists the attributes)`);
  };
  if (!d || typeof d !== 'object') bad('nothing readable', raw);
  if (d.id !== entry.id) bad(`id ${show(entry.id)}`, d.id);
  if (d.options !== undefined && !Array.isArray(d.options)) bad('options as a list of {name, type, default, doc}', d.options);
  for (const o of d.options ?? []) {
    if (!o || typeof o.name !== 'string' || typeof o.type !== 'string' || typeof o.doc !== 'string') bad('each option with name, type, default and doc', o);
  }
  if (d.actions !== undefined && (!Array.isArray(d.actions) || d.actions.some((a) => typeof a !== 'string'))) bad('actions as a list of strings', d.actions);
  if (!d.hasAdmissible && !(d.actions && d.actions.length > 0)) bad('actions (a non-empty list) or an admissible_commands() method', d.actions);
  if (d.timeout !== undefined && !(typeof d.timeout === 'number' && d.timeout > 0)) bad('timeout in seconds > 0', d.timeout);
  return d;
}

/** The EnvDefinition of a Python env (declaration read once per process; an env that cannot load becomes an
 *  "unavailable" definition whose create() says why). */
export function pythonEnvDefinition(entry: PythonEnvEntry): EnvDefinition {
  const cached = definitions.get(entry.file + '\n' + entry.id);
  if (cached) return cached;
  const def = buildDefinition(entry);
  definitions.set(entry.file + '\n' + entry.id, def);
  return def;
}

function buildDefinition(entry: PythonEnvEntry): EnvDefinition {
  if (entry.error) return unavailable(entry, `the file does not parse: ${entry.error}`);
  const python = choosePython(entry.requires);
  if (typeof python !== 'string') return unavailable(entry, `requires ${entry.requires.join(', ')}: ${python.missing}`);
  let decl: Declaration;
  try {
    decl = checkDeclaration(entry, hostFor(entry, python).call('describe', {}, timeoutMs(null, true)).declaration);
  } catch (error) {
    return unavailable(entry, (error as Error).message);
  }
  const specs = (decl.options ?? []).map((o) => ({ ...o })) as OptionSpec[];
  const parse = decl.hasParser
    ? (text: string): string | null => {
        const reply = hostFor(entry, python).call('parse', { text }, timeoutMs(decl));
        return typeof reply.text === 'string' ? reply.text : null;
      }
    : (text: string): string | null => text;
  const actions = decl.hasAdmissible ? [] : [...(decl.actions ?? [])];
  const def: EnvDefinition = {
    id: entry.id,
    title: decl.title ?? entry.title,
    docs: { ...DOC_DEFAULTS, ...(decl.docs ?? {}) },
    options: specs,
    actions,
    ...(actions.length === 0 ? { actionPattern: '<one of the admissible commands listed with the state>' } : {}),
    instruction: decl.instruction ?? `You are playing ${decl.title ?? entry.id}, a text game.`,
    legend: decl.legend ?? '',
    rules: (env: Env) => (env instanceof PythonEnv && env.rulesLine) || decl.rules || `Play the ${entry.id} game.`,
    budget: { ...DEFAULT_BUDGET, ...(decl.budget ?? {}) },
    vocabulary: textVocabulary(entry.id, parse),
    create(options: Record<string, unknown>): Env {
      return new PythonEnv(entry, python, decl, validateOptions(entry.id, specs, options));
    },
    ...(decl.hasOracle
      ? {
          solve(env: Env): EnvSolution {
            const plan = env instanceof PythonEnv ? env.oracle() : null;
            return plan === null ? { solved: false, actions: [], optimal: false, note: 'the env gave no plan' }
              : { solved: true, actions: plan, optimal: false, note: 'the env\'s oracle()' };
          },
        }
      : {}),
  };
  return def;
}

/** The Python env with this id (after the listing), or null. */
export function findPythonEnv(id: string): EnvDefinition | null {
  const entry = listPythonEnvs().find((e) => e.id === id);
  return entry ? pythonEnvDefinition(entry) : null;
}
