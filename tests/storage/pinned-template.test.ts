// A run's pinned template (<run>/template.json) has one reader, core/storage's readPinnedTemplate, with
// one error policy: absent = null (the caller resolves the preset); unreadable, not JSON or not a valid
// template = CorruptData naming the file, for the pipeline, the inspect API and the export alike.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pinnedTemplatePath, readPinnedTemplate } from '../../core/storage/run-files.js';
import { assertTemplate } from '../../core/prompts/template.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { runTemplate } from '../../core/train/episodes.js';
import { RunConfigSchema } from '../../core/api/run-config.js';
import { WorkbenchError } from '../../core/api/errors.js';

function corrupt(fn: () => unknown, text: RegExp): void {
  let err: unknown;
  try { fn(); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(WorkbenchError);
  expect((err as WorkbenchError).name).toBe('CorruptData');
  expect((err as Error).message).toMatch(text);
}

describe('the pinned template is read through core/storage only', () => {
  it('null when absent; the template when valid; CorruptData naming the file otherwise', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pinned-'));
    const file = pinnedTemplatePath(dir);
    expect(file).toBe(path.join(dir, 'template.json'));
    expect(readPinnedTemplate(dir, assertTemplate)).toBeNull();
    const config = RunConfigSchema.parse({ env: { id: 'frozenlake' }, template: { preset: 'spa' } });
    expect(runTemplate(config, dir).name).toBe(builtinTemplate('spa', 'world-model').name);   // no pin: the preset

    const saved = { ...builtinTemplate('spa', 'world-model'), name: 'pinned-one' };
    fs.writeFileSync(file, JSON.stringify(saved));
    const read = readPinnedTemplate(dir, assertTemplate)!;
    expect(read.template.name).toBe('pinned-one');
    expect(read.json).toEqual(JSON.parse(JSON.stringify(saved)));
    expect(runTemplate(config, dir).name).toBe('pinned-one');

    fs.writeFileSync(file, '{ not json');
    corrupt(() => readPinnedTemplate(dir, assertTemplate), /template\.json: the run's pinned template is not valid JSON/);
    corrupt(() => runTemplate(config, dir), /not valid JSON/);
    fs.writeFileSync(file, JSON.stringify({ name: 'x' }));
    corrupt(() => readPinnedTemplate(dir, assertTemplate), /template\.json: the run's pinned template is invalid/);
    corrupt(() => runTemplate(config, dir), /is invalid/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('no other core file opens template.json itself', () => {
    const files = (d: string): string[] => fs.readdirSync(d).flatMap((f) => {
      const p = path.join(d, f);
      return fs.statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
    });
    const spelled = files('core').filter((f) => fs.readFileSync(f, 'utf8').includes("'template.json'"));
    expect(spelled).toEqual(['core/storage/run-files.ts']);
    for (const f of ['core/train/episodes.ts', 'core/host/inspect-handlers.ts', 'core/interop/export-bundle.ts']) {
      expect(fs.readFileSync(f, 'utf8')).toContain('readPinnedTemplate(');
    }
  });
});
