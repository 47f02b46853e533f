// Prompt templates: data (JSON) that renders the whole chat of an episode with Liquid
// (liquidjs: no code execution, no file access). A template is versioned by the sha-256 of its
// canonical JSON. Parts: system line, instruction (first user message head), turn message,
// reward message, state text, and optionally the format line.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { Liquid, type Template as LiquidTemplate } from 'liquidjs';

export const ResponseFormatSchema = z.enum(['plain', 'world-model']);
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;

export const TEMPLATE_PARTS = ['system', 'instruction', 'turn', 'reward', 'state', 'format'] as const;
export type TemplatePart = (typeof TEMPLATE_PARTS)[number];

export const TemplateSchema = z.object({
  name: z.string().min(1).regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" or "-" only'),
  description: z.string().default(''),
  responseFormat: ResponseFormatSchema,
  parts: z.object({
    system: z.string(),
    instruction: z.string(),
    turn: z.string(),
    reward: z.string(),
    state: z.string(),
    format: z.string().optional(),       // overrides the default format line of responseFormat
  }).strict(),
}).strict();
export type PromptTemplate = z.infer<typeof TemplateSchema>;

export interface TemplateIssue {
  part?: string;           // which part (system, turn, ...) or field
  message: string;
  line?: number;           // one-based, within the part
  column?: number;         // one-based
}

export class TemplateError extends Error {
  readonly issues: TemplateIssue[];
  constructor(message: string, issues: TemplateIssue[]) {
    super(`${message}: ${issues.map((i) => `${i.part ?? 'template'}${i.line ? ` line ${i.line} column ${i.column}` : ''}: ${i.message}`).join('; ')}`);
    this.name = 'TemplateError';
    this.issues = issues;
  }
}

// One Liquid engine: no filesystem (`templates: {}` makes {% include %} look in an empty map),
// unknown filters are errors, only own properties are readable. Limits keep one hostile or
// mistaken template from freezing or exhausting the host (a prompt is a few kB and renders in
// milliseconds; these are orders of magnitude above that):
export const LIQUID_LIMITS = {
  parseLimit: 512 * 1024,          // characters of one part's source
  renderLimit: 3_000,              // milliseconds of one render call
  memoryLimit: 1_000_000,          // Liquid's allocation units (about bytes: strings, ranges, arrays) per render
} as const;
const liquid = new Liquid({ templates: {}, strictFilters: true, ownPropertyOnly: true, cache: false, ...LIQUID_LIMITS });

// Parsed parts by source text, least recently used first; bounded by the total source size (a
// parsed template takes a multiple of its source in memory) as well as by count.
const PARSE_CACHE_MAX_CHARS = 2 * 1024 * 1024;
const PARSE_CACHE_MAX_ENTRIES = 500;
const parsedCache = new Map<string, LiquidTemplate[]>();
let parsedCacheChars = 0;

function cacheParsed(source: string, parsed: LiquidTemplate[]): void {
  if (source.length > PARSE_CACHE_MAX_CHARS / 4) return;   // a huge part is parsed each time, never pinned
  parsedCache.set(source, parsed);
  parsedCacheChars += source.length;
  for (const key of parsedCache.keys()) {
    if (parsedCacheChars <= PARSE_CACHE_MAX_CHARS && parsedCache.size <= PARSE_CACHE_MAX_ENTRIES) break;
    parsedCache.delete(key);
    parsedCacheChars -= key.length;
  }
}

/** The parse cache's size, for tests and diagnostics. */
export function parseCacheStats(): { entries: number; chars: number } { return { entries: parsedCache.size, chars: parsedCacheChars }; }

function liquidIssue(part: string, error: unknown): TemplateIssue {
  const e = error as { message?: string; token?: { getPosition?: () => [number, number] } };
  const position = e.token?.getPosition?.();
  const message = String(e.message ?? error).replace(/, line:\d+, col:\d+$/, '');
  return position ? { part, message, line: position[0], column: position[1] } : { part, message };
}

function parsePart(part: string, source: string): LiquidTemplate[] {
  const hit = parsedCache.get(source);
  if (hit) { parsedCache.delete(source); parsedCache.set(source, hit); return hit; }   // most recently used last
  try {
    const parsed = liquid.parse(source);
    cacheParsed(source, parsed);
    return parsed;
  } catch (error) {
    throw new TemplateError('template does not parse', [liquidIssue(part, error)]);
  }
}

/** Render one part of a template with variables; errors carry part, line and column. */
export function renderPart(template: PromptTemplate, part: TemplatePart, vars: Record<string, unknown>): string {
  const source = template.parts[part];
  if (source === undefined) throw new TemplateError('missing template part', [{ part, message: `template "${template.name}" has no "${part}" part` }]);
  const parsed = parsePart(part, source);
  try {
    return liquid.renderSync(parsed, vars) as string;
  } catch (error) {
    throw new TemplateError(`template "${template.name}" failed to render`, [liquidIssue(part, error)]);
  }
}

export type ValidateResult = { ok: true; template: PromptTemplate; hash: string } | { ok: false; issues: TemplateIssue[] };

/** Validate template JSON (an object or a JSON string): shape, then every part parses as Liquid. */
export function validateTemplate(json: unknown): ValidateResult {
  let input = json;
  if (typeof json === 'string') {
    try {
      input = JSON.parse(json);
    } catch (error) {
      const m = /position (\d+)/.exec(String(error));
      const issue: TemplateIssue = { message: `not valid JSON: ${(error as Error).message}` };
      if (m) {
        const before = json.slice(0, Number(m[1]));
        issue.line = before.split('\n').length;
        issue.column = Number(m[1]) - before.lastIndexOf('\n');
      }
      return { ok: false, issues: [issue] };
    }
  }
  const shape = TemplateSchema.safeParse(input);
  if (!shape.success) {
    return {
      ok: false,
      issues: shape.error.issues.map((i) => ({
        part: i.path.join('.') || undefined,
        message: `${i.message}${i.code === 'unrecognized_keys' ? ' (known parts: system, instruction, turn, reward, state, format)' : ''}`,
      })),
    };
  }
  const issues: TemplateIssue[] = [];
  for (const part of TEMPLATE_PARTS) {
    const source = shape.data.parts[part];
    if (source === undefined) continue;
    try {
      parsePart(part, source);
    } catch (error) {
      issues.push(...(error as TemplateError).issues);
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, template: shape.data, hash: templateHash(shape.data) };
}

/** Validate or throw a TemplateError listing every issue. */
export function assertTemplate(json: unknown): PromptTemplate {
  const result = validateTemplate(json);
  if (!result.ok) throw new TemplateError('invalid template', result.issues);
  return result.template;
}

/** Canonical JSON: object keys sorted recursively, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Content hash of a template: sha-256 hex of its canonical JSON (name and description included). */
export function templateHash(template: PromptTemplate): string {
  return createHash('sha256').update(canonicalJson(template)).digest('hex');
}

// ---------------------------------------------------------------- default parts and presets

export const DEFAULT_FORMAT: Record<ResponseFormat, string> = {
  plain: '<think> [Your thoughts] </think> <answer> [your answer] </answer>',
  'world-model': '<think> <observation> [the current state] </observation> [Your reasoning] <prediction> [the state after your actions] ' +
    '</prediction> </think> <answer> [your answer] </answer>',
};

const SYSTEM = "You're a helpful assistant. You are a good game problem-solver, you'll solve the given game problems step by step.";

const INSTRUCTION = [
  '{{ env.instruction }}',
  'The meaning of each symbol in the state is:',
  '{{ env.legend }}',
  'Your available actions are:',
  '{{ actions_text }}',
  'You can take up to {{ max_actions_per_turn }} action(s) at a time, separated by the action separator " || ", ' +
    'and up to {{ max_actions_per_game }} actions in the whole game.',
  '{% if response_format == "world-model" %}In <observation>, describe the current state; in <prediction>, describe the state after your actions. ' +
    'Use the same format as the state you are given.\n{% endif %}',
].join('\n');

const TURN = '\nTurn {{ turn }}:\nState:\n{{ state }}\nYou have {{ actions_left }} actions left. Always output: {{ format }} with no extra text. ' +
  'Strictly follow this format. Max response length: {{ length_limit }} words (tokens).\n';

const REWARD = 'Reward:\n{{ reward }}\n';

function preset(name: string, description: string, state: string, responseFormat: ResponseFormat = 'world-model'): PromptTemplate {
  return { name, description, responseFormat, parts: { system: SYSTEM, instruction: INSTRUCTION, turn: TURN, reward: REWARD, state } };
}

const PRESETS: PromptTemplate[] = [
  preset('raw-grid', 'The raw symbol grid only (the state as RAGEN renders it).', '{{ grid }}'),
  preset(
    'spa',
    'SPA state estimation: the grid followed by the released coordinate line (Sokoban/FrozenLake zero-based, Sudoku one-based empty positions).',
    '{{ grid }}\n{{ spa_coordinates }}',
  ),
  preset('coordinates', 'Coordinate listing by entity kind only (Walls / Targets / Boxes / Player), no grid.', '{{ coordinate_listing }}'),
  preset('grid-coordinates', 'The grid followed by the coordinate listing by kind.', '{{ grid }}\n{{ coordinate_listing }}'),
  preset('relations', 'The grid followed by each entity\'s position relative to the player (above/below/left/right/same).', '{{ grid }}\n{{ relations }}'),
  preset('json', 'The state as one line of JSON (grid rows and positions by kind).', '{{ json }}'),
  preset(
    'random-coordinates',
    'Ablation: the grid followed by a well-formed but wrong coordinate line (random positions, seeded by the state).',
    '{{ grid }}\n{{ random_coordinates }}',
  ),
  preset('vanilla', 'Vanilla RL baseline: the raw grid with the plain <think>/<answer> response format.', '{{ grid }}', 'plain'),
];

/** Names and descriptions of the built-in templates. */
export function listTemplatePresets(): { name: string; description: string; responseFormat: ResponseFormat; hash: string }[] {
  return PRESETS.map((p) => ({ name: p.name, description: p.description, responseFormat: p.responseFormat, hash: templateHash(p) }));
}

/** A copy of a built-in template. Throws TemplateError naming the presets when unknown. */
export function getTemplatePreset(name: string): PromptTemplate {
  const p = PRESETS.find((t) => t.name === name);
  if (!p) {
    throw new TemplateError('unknown template preset', [{ message: `expected one of ${PRESETS.map((t) => t.name).join(', ')}; ` +
      `received ${JSON.stringify(name)}` }]);
  }
  return structuredClone(p);
}
