// The one template resolver: built-ins (prompt presets and tiny-*), saved versions that win over a
// built-in of the same name, hash prefixes and name@hash, and NotFound errors that list what exists.
import { describe, expect, it } from 'vitest';
import { builtinTemplate, builtinTemplateNames, resolveTemplateRef } from '../../core/prompts/resolve-template.js';
import { listTemplatePresets, templateHash } from '../../core/prompts/template.js';
import { TINY_TEMPLATES } from '../../core/prompts/tiny-templates.js';
import { WorkbenchError } from '../../core/api/errors.js';

const none = () => [];

describe('resolveTemplateRef', () => {
  it('knows every prompt preset and every tiny-* template, and switches the response format on request', () => {
    expect(builtinTemplateNames()).toEqual([...listTemplatePresets().map((p) => p.name), ...TINY_TEMPLATES.map((t) => t.name)]);
    expect(builtinTemplate('tiny-spa', 'plain').responseFormat).toBe('plain');
    expect(builtinTemplate('tiny-spa').responseFormat).toBe('world-model');
    expect(() => builtinTemplate('nope')).toThrow(/expected one of .*tiny-spa/);
  });

  it('resolves a built-in by name, with or without a matching hash prefix', () => {
    const hash = templateHash(builtinTemplate('spa'));
    expect(resolveTemplateRef({ name: 'spa' }, none)).toMatchObject({ kind: 'preset', name: 'spa', hash });
    expect(resolveTemplateRef({ name: `spa@${hash.slice(0, 8)}` }, none)).toMatchObject({ kind: 'preset', hash });
    expect(() => resolveTemplateRef({ name: 'spa', hash: 'ffff0000' }, none)).toThrow(/the preset's hash is/);
  });

  it('prefers a saved version of the same name: the exact hash, else the newest with the prefix, else the newest', () => {
    const versions = [{ hash: 'aa11', n: 1 }, { hash: 'aa22', n: 2 }, { hash: 'bb33', n: 3 }];
    const saved = (name: string) => (name === 'spa' ? versions : []);
    expect(resolveTemplateRef({ name: 'spa' }, saved)).toMatchObject({ kind: 'saved', version: { n: 3 } });
    expect(resolveTemplateRef({ name: 'spa', hash: 'aa' }, saved)).toMatchObject({ kind: 'saved', version: { n: 2 } });
    expect(resolveTemplateRef({ name: 'spa@aa11' }, saved)).toMatchObject({ kind: 'saved', version: { n: 1 } });
  });

  it('says NotFound, listing what exists, for an unknown name or a hash no version has', () => {
    const err = (() => { try { resolveTemplateRef({ name: 'mine' }, none, 'template'); } catch (e) { return e; } return null; })();
    expect(err).toBeInstanceOf(WorkbenchError);
    expect((err as WorkbenchError).name).toBe('NotFound');
    expect((err as WorkbenchError).message).toMatch(/neither a preset nor saved in this project; presets: .*tiny-spa/);
    expect(() => resolveTemplateRef({ name: 'mine', hash: 'cc' }, () => [{ hash: 'aa11' }])).toThrow(/mine@cc is not saved in this project; its versions: aa11/);
  });
});
