import { describe, expect, it } from 'vitest';
import { createEnv } from '../../core/envs/index.js';
import { assertTemplate, getTemplatePreset, listTemplatePresets, renderPart, renderState, templateHash, validateTemplate } from '../../core/prompts/index.js';

describe('templates', () => {
  it('presets validate and have distinct, stable content hashes', () => {
    const presets = listTemplatePresets();
    expect(presets.map((p) => p.name)).toEqual(['raw-grid', 'spa', 'coordinates', 'grid-coordinates', 'relations', 'json', 'random-coordinates', 'vanilla']);
    for (const p of presets) {
      const t = getTemplatePreset(p.name);
      const v = validateTemplate(t);
      expect(v.ok).toBe(true);
      expect(templateHash(t)).toMatch(/^[0-9a-f]{64}$/);
      expect(templateHash(t)).toBe(p.hash);
    }
    expect(new Set(presets.map((p) => p.hash)).size).toBe(presets.length);
  });

  it('the hash ignores key order but not content', () => {
    const t = getTemplatePreset('spa');
    const reordered = JSON.parse(JSON.stringify({ parts: t.parts, responseFormat: t.responseFormat, description: t.description, name: t.name }));
    expect(templateHash(reordered)).toBe(templateHash(t));
    expect(templateHash({ ...t, parts: { ...t.parts, state: `${t.parts.state} ` } })).not.toBe(templateHash(t));
  });

  it('Liquid errors are reported with part, line and column', () => {
    const t = getTemplatePreset('spa');
    const bad = { ...t, parts: { ...t.parts, turn: 'Turn {{ turn }}\nState:\n  {{ state | nosuchfilter }}' } };
    const v = validateTemplate(bad);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.issues[0]).toMatchObject({ part: 'turn', line: 3, column: 3 });
    expect(() => assertTemplate(bad)).toThrow(/turn line 3 column 3: undefined filter: nosuchfilter/);
    const unclosed = validateTemplate({ ...t, parts: { ...t.parts, state: 'a\n{% if grid %}b' } });
    expect(unclosed.ok).toBe(false);
    if (!unclosed.ok) expect(unclosed.issues[0].line).toBe(2);
  });

  it('shape errors name the field; bad JSON text names line and column', () => {
    const v = validateTemplate({ name: 'x', responseFormat: 'fancy', parts: {} });
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.issues.map((i) => i.part)).toEqual(expect.arrayContaining(['responseFormat', 'parts.system']));
    const extra = validateTemplate({ ...getTemplatePreset('spa'), parts: { ...getTemplatePreset('spa').parts, footer: 'x' } });
    expect(extra.ok).toBe(false);
    const json = validateTemplate('{\n  "name": "x",\n  oops\n}');
    expect(json.ok).toBe(false);
    if (!json.ok) expect(json.issues[0].line).toBe(3);
  });

  it('templates cannot read files ({% include %} has no file system)', () => {
    const t = { ...getTemplatePreset('spa'), parts: { ...getTemplatePreset('spa').parts, state: "{% include '/etc/passwd' %}" } };
    const env = createEnv('sokoban');
    env.reset({ seed: 0 });
    expect(() => renderState(assertTemplate(t), env)).toThrow();
  });

  it('a custom template is data: any variable combination renders', () => {
    const t = assertTemplate({ ...getTemplatePreset('spa'), name: 'mine', parts: { ...getTemplatePreset('spa').parts, state: '{{ rows }}x{{ cols }} {% for e in entities %}{% if e.kind == "player" %}P@{{ e.row }},{{ e.col }}{% endif %}{% endfor %}' } });
    const env = createEnv('frozenlake', { map: ['FFS', 'FFG'] });
    env.reset();
    expect(renderState(t, env)).toBe('2x3 P@0,2');
    expect(renderPart(t, 'reward', { reward: 1 })).toBe('Reward:\n1\n');
  });
});
