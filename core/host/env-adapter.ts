// The one place where the API meets core/envs and core/prompts: converts their results to the
// contract's plain-JSON shapes and their errors to API errors with where/expected/received.
import type {
  EnvDescription, EnvInfo, RenderedPuzzle, TemplateDiagnostic, TemplateListItem, TemplatePreview, TemplateVersion,
} from '../api/contract.js';
import { WorkbenchError } from '../api/errors.js';
import { createEnv, describeEnv, listEnvs } from '../envs/index.js';
import { previewPrompt, templateHash, validateTemplate, type PromptTemplate, type TemplateIssue } from '../prompts/index.js';
import { builtinTemplate, builtinTemplateNames, isBuiltinTemplate } from '../prompts/resolve-template.js';

/** Env/prompt errors → ValidationError naming the request field. */
function asApiError(err: unknown, where: string): WorkbenchError {
  if (err instanceof WorkbenchError) return err;
  const e = err as Error & { details?: Record<string, unknown>; issues?: TemplateIssue[]; where?: string; expected?: string; received?: string };
  const details: Record<string, unknown> = { where };
  for (const k of ['where', 'expected', 'received', 'hint'] as const) {
    const v = e?.details?.[k] ?? e?.[k as 'where'];
    if (typeof v === 'string') details[k === 'where' ? 'source' : k] = v;
  }
  if (e?.issues) details.issues = e.issues.map((i) => ({ path: i.part ?? '', message: `${i.line ? `line ${i.line} column ${i.column}: ` : ''}${i.message}` }));
  return new WorkbenchError('ValidationError', `${where}: ${e?.message ?? String(err)}`, details);
}

export function envInfos(): EnvInfo[] {
  return listEnvs().map((id) => {
    const d = describeEnv(id);
    return {
      id: d.id, title: d.title, description: d.docs.summary, actions: d.actions,
      defaultOptions: Object.fromEntries(d.options.map((o) => [o.name, o.default])), cells: d.cells,
    };
  });
}

export function envDescription(id: string): EnvDescription {
  let d: ReturnType<typeof describeEnv>;
  try { d = describeEnv(id); } catch (err) {
    throw new WorkbenchError('NotFound', `env ${JSON.stringify(id)} is not registered; ` + `available: ${listEnvs().join(', ')}`, {
      where: 'envs.describe id',
      expected: listEnvs().join(' | '),
      received: JSON.stringify(id),
      cause: (err as Error).message,
    });
  }
  return {
    id: d.id, title: d.title, description: d.docs.summary, actions: d.actions,
    defaultOptions: Object.fromEntries(d.options.map((o) => [o.name, o.default])), cells: d.cells,
    sections: { ...d.docs },
    options: d.options.map(({ values, ...o }) => ({ ...o, ...(values ? { values: [...values] } : {}) })),
    ...(d.actionPattern ? { actionPattern: d.actionPattern } : {}),
    instruction: d.instruction, legend: d.legend, budget: { ...d.budget }, hasSolver: d.hasSolver,
  };
}

// ── templates ──

export function templatePresetItems(): TemplateListItem[] {
  return builtinTemplateNames().map((name) => {
    const t = builtinTemplate(name);
    return { name, kind: 'preset' as const, description: t.description, latestHash: templateHash(t), versionCount: 1 };
  });
}

export function isTemplatePreset(name: string): boolean {
  return isBuiltinTemplate(name);
}

/** A preset as a TemplateVersion (source = pretty JSON). */
export function presetTemplateVersion(name: string): TemplateVersion {
  let t: PromptTemplate;
  try { t = builtinTemplate(name); } catch (err) { throw asApiError(err, 'template'); }
  return { name, hash: templateHash(t), createdAt: 0, description: t.description, parent: null, source: `${JSON.stringify(t, null, 2)}\n` };
}

function diagnostics(issues: TemplateIssue[]): TemplateDiagnostic[] {
  return issues.map((i) => ({
    message: `${i.part ? `${i.part}: ` : ''}${i.message}`, line: i.line ?? null, column: i.column ?? null, severity: 'error' as const,
  }));
}

export type CheckedTemplate = { ok: true; template: PromptTemplate; hash: string } | { ok: false; diagnostics: TemplateDiagnostic[] };

/** Validate template source text (JSON); `name`, when given, replaces the template's own name. */
export function checkTemplateSource(source: string, name?: string): CheckedTemplate {
  let input: unknown = source;
  if (name !== undefined) {
    try {
      const obj = JSON.parse(source) as Record<string, unknown>;
      if (obj && typeof obj === 'object' && !Array.isArray(obj)) input = { ...obj, name };
    } catch { /* validateTemplate reports the JSON error with line and column */ }
  }
  const r = validateTemplate(input);
  if (!r.ok) return { ok: false, diagnostics: diagnostics(r.issues) };
  return { ok: true, template: r.template, hash: r.hash };
}

export function parseStoredTemplate(version: TemplateVersion): PromptTemplate {
  const r = checkTemplateSource(version.source);
  if (!r.ok)
    throw new WorkbenchError(
      'CorruptData',
      `template ${version.name}@${version.hash.slice(0, 12)} no longer validates: ${r.diagnostics[0]?.message}`,
      { where: `templates/${version.name}@${version.hash}.json` },
    );
  return r.template;
}

export function previewTemplate(
  template: PromptTemplate,
  env: { id: string; options: Record<string, unknown> },
  seed: number,
  responseFormat: 'plain' | 'world-model',
): TemplatePreview {
  try {
    const p = previewPrompt(template, env.id, env.options, seed, { responseFormat });
    const firstUser = p.messages.find((m) => m.role === 'user');
    return {
      ok: true,
      diagnostics: [],
      hash: templateHash(template),
      stateText: p.stateText,
      prompt: firstUser?.content ?? null,
      messages: p.messages,
      board: p.board,
    };
  } catch (err) {
    const e = err as { issues?: TemplateIssue[]; message?: string };
    const diags = e.issues ? diagnostics(e.issues) : [{ message: e.message ?? String(err), line: null, column: null, severity: 'error' as const }];
    return { ok: false, diagnostics: diags, hash: null, stateText: null, prompt: null, messages: [], board: null };
  }
}

export function renderPuzzle(
  template: PromptTemplate, env: { id: string; options: Record<string, unknown> }, seed: number, responseFormat: 'plain' | 'world-model',
): RenderedPuzzle {
  let p: ReturnType<typeof previewPrompt>;
  try { p = previewPrompt(template, env.id, env.options, seed, { responseFormat }); } catch (err) { throw asApiError(err, 'envs.render'); }
  const d = describeEnv(env.id);
  const firstUser = p.messages.find((m) => m.role === 'user');
  const options = { ...Object.fromEntries(d.options.map((o) => [o.name, o.default])), ...env.options };
  return {
    env: d.id, seed, options, board: p.board, gridText: gridOf(env, seed), stateText: p.stateText,
    prompt: firstUser?.content ?? '', messages: p.messages, legalActions: d.actions, templateHash: templateHash(template),
  };
}

function gridOf(env: { id: string; options: Record<string, unknown> }, seed: number): string {
  try {
    const e = createEnv(env.id, env.options);
    e.reset({ seed });
    return e.gridText();
  } catch { return ''; }
}
