// The one way a template name becomes a template. Built-in templates are the prompt presets
// (template.ts) and the compact tiny-* variants for tiny models (tiny-templates.ts). A project may
// save versions of its own templates (core/storage); a saved name wins over a built-in of the same
// name. Callers hand in the project's saved versions, so this file stays pure: the API host reads
// them from the locked ProjectStore, template perplexity from the lock-free ProjectView.
import { WorkbenchError } from '../api/errors.js';
import { getTemplatePreset, listTemplatePresets, templateHash, TemplateError, type PromptTemplate, type ResponseFormat } from './template.js';
import { TINY_TEMPLATES } from './tiny-templates.js';

/** Names of the built-in templates: the prompt presets, then the tiny-* variants. */
export function builtinTemplateNames(): string[] {
  return [...listTemplatePresets().map((p) => p.name), ...TINY_TEMPLATES.map((t) => t.name)];
}

export function isBuiltinTemplate(name: string): boolean {
  return builtinTemplateNames().includes(name);
}

/** A copy of a built-in template, switched to `responseFormat` when given. TemplateError naming the built-ins when unknown. */
export function builtinTemplate(name: string, responseFormat?: ResponseFormat): PromptTemplate {
  const tiny = TINY_TEMPLATES.find((t) => t.name === name);
  let template: PromptTemplate;
  if (tiny) template = structuredClone(tiny);
  else if (listTemplatePresets().some((p) => p.name === name)) template = getTemplatePreset(name);
  else {
    const message = `expected one of ${builtinTemplateNames().join(', ')}; received ${JSON.stringify(name)}`;
    throw new TemplateError('unknown template preset', [{ message }]);
  }
  if (responseFormat && responseFormat !== template.responseFormat) template.responseFormat = responseFormat;
  return template;
}

/** What the resolver needs of a saved version; callers pass richer records and get the same one back. */
export interface SavedTemplateRef { hash: string }

export type ResolvedTemplate<V extends SavedTemplateRef> =
  | { kind: 'saved'; name: string; hash: string; version: V }
  | { kind: 'preset'; name: string; hash: string; template: PromptTemplate };

/**
 * A template reference `{ name, hash? }` (`name@hash` is accepted too; a hash may be a prefix):
 * a saved version when the project has versions of that name (`saved`, oldest first; the exact
 * hash, else the newest with that prefix, else the newest), otherwise the built-in template.
 * NotFound (WorkbenchError, at `where`) when neither has it or no version matches the hash.
 */
export function resolveTemplateRef<V extends SavedTemplateRef>(
  ref: { name: string; hash?: string | null }, saved: (name: string) => readonly V[], where = 'template',
): ResolvedTemplate<V> {
  let name = ref.name;
  let hash = ref.hash ?? undefined;
  const at = name.indexOf('@');
  if (at >= 0) { hash = name.slice(at + 1) || hash; name = name.slice(0, at); }
  const versions = saved(name);
  if (versions.length > 0) {
    const wanted = hash;
    const newest = versions[versions.length - 1]!;
    const version = !wanted ? newest : versions.find((v) => v.hash === wanted) ?? versions.filter((v) => v.hash.startsWith(wanted)).pop();
    if (!version) {
      const list = versions.map((v) => v.hash.slice(0, 12)).reverse().join(', ');
      throw new WorkbenchError('NotFound', `template ${name}@${hash} is not saved in this project; its versions: ${list} (see templates.versions)`, {
        where: `${where} hash`, expected: `a saved version of ${name}`, received: JSON.stringify(hash),
      });
    }
    return { kind: 'saved', name, hash: version.hash, version };
  }
  if (!isBuiltinTemplate(name)) {
    const presets = builtinTemplateNames().join(', ');
    throw new WorkbenchError('NotFound', `template ${JSON.stringify(name)} is neither a preset nor saved in this project; presets: ${presets}`, {
      where, expected: 'a template preset or saved template name (name or name@hash)', received: JSON.stringify(ref.name),
    });
  }
  const template = builtinTemplate(name);
  const h = templateHash(template);
  if (hash && !h.startsWith(hash)) {
    throw new WorkbenchError('NotFound', `template ${name}@${hash}: the preset's hash is ${h.slice(0, 12)}`, {
      where: `${where} hash`, expected: h.slice(0, 12), received: JSON.stringify(hash),
    });
  }
  return { kind: 'preset', name, hash: h, template };
}
