// D3: one template must not freeze or exhaust the host: Liquid runs with parse/render/memory
// limits, and the parse cache is bounded by the size of what it holds, not only by count.
import { describe, expect, it } from 'vitest';
import { parseCacheStats, renderPart, TemplateError, type PromptTemplate } from '../../core/prompts/template.js';

const tpl = (system: string) => ({ name: 't', description: '', parts: { system } }) as unknown as PromptTemplate;

describe('Liquid limits (D3)', () => {
  it('a 4-million-step loop is refused with a named error instead of blocking the host', () => {
    const err = (() => { try { renderPart(tpl('{% for i in (1..4000000) %}x{% endfor %}'), 'system', {}); return null; } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(TemplateError);
    expect((err as Error).message).toMatch(/failed to render.*(limit|exceeded)/i);
  });

  it('a string blown up by filters hits the memory limit', () => {
    const src = '{% assign s = "xxxxxxxxxx" %}{% for i in (1..22) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}';
    expect(() => renderPart(tpl(src), 'system', {})).toThrow(TemplateError);
  });

  it('a part larger than the parse limit is refused', () => {
    expect(() => renderPart(tpl(`${'a'.repeat(600 * 1024)}{{ x }}`), 'system', { x: 1 })).toThrow(/does not parse.*limit/i);
  });

  it('ordinary templates still render', () => {
    expect(renderPart(tpl('{% for i in (1..3) %}{{ i }}{% endfor %} {{ name | upcase }}'), 'system', { name: 'ok' })).toBe('123 OK');
  });

  it('the parse cache is bounded by bytes: 30 large distinct templates stay under the cap', () => {
    for (let i = 0; i < 30; i++) renderPart(tpl(`${String(i).padEnd(300 * 1024, '.')}{{ x }}`), 'system', { x: i });
    const stats = parseCacheStats();
    expect(stats.chars).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(stats.entries).toBeLessThan(30);
  });
});
