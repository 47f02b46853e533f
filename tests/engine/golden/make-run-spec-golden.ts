// Writes tests/engine/golden/run-spec-golden.json: the effective values of every registered preset at every size it offers,
// as the code resolved them when this file was made (the "before" of issue 36's one-run-spec change). The effective value of
// a stage section is what its stage reads: the section parsed with its schema's defaults. Run from the repo root:
//   node bin/run-ts.mjs tests/engine/golden/make-run-spec-golden.ts
// Regenerate only when an effective value changes on purpose, and list that change in tests/engine/run-spec-golden.test.ts.
import { writeFileSync } from 'node:fs';
import { listPresets } from '../../../core/engine/presets.js';
import { resolveRunConfig } from '../../../core/engine/config.js';
import { StageSectionSchemas } from '../../../core/api/run-config.js';

const out: Record<string, unknown> = {};
// every preset x size, plus configs that name no preset (the schema's defaults alone)
const requests: Array<[string, Parameters<typeof resolveRunConfig>[0]]> = [];
for (const p of listPresets()) for (const size of p.sizes) requests.push([`${p.id} ${size}`, { preset: p.id, size }]);
for (const method of ['spa', 'vanilla-rl', 'rwml-rl'] as const) requests.push([`config {method: ${method}}`, { config: { method } }]);
requests.push(['config {}', { config: {} }]);
{
  for (const [key, req] of requests) {
    const r = resolveRunConfig(req);
    if (!r.config) throw new Error(`${key}: no config (${JSON.stringify(r.issues)})`);
    const { stages: raw, ...top } = r.config;
    const sections: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(StageSectionSchemas)) sections[name] = schema.parse(raw[name] ?? {});
    const other: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(raw)) if (!(name in StageSectionSchemas)) other[name] = value;
    out[key] = { top, sections, other, plan: r.stages, issuePaths: r.issues.map((i) => i.path) };
  }
}
writeFileSync(new URL('./run-spec-golden.json', import.meta.url), JSON.stringify(out, null, 1) + '\n');
console.log(`${Object.keys(out).length} preset x size entries`);
