// Issue 37 item 6: text files users hand over are read as users write them. Each importer of runs.import (RAGEN
// recorder JSONL, verl metrics JSONL, verl validation dumps, verl console logs, raw_trajectories JSON, W&B tables as
// JSON and CSV, a RAGEN Hydra YAML, and the workbench's own export folder with metrics.csv) gets its file with a
// UTF-8 byte-order mark (what Excel and Notepad write), with CRLF line endings, and without a final newline, and must
// import exactly what the plain LF file imports. Before the fix the W&B CSV with a BOM was skipped ("CSV without step
// and output_1 columns"), an exported metrics.csv with a BOM was refused, and every JSON/JSONL file with a BOM failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importRagenRun } from '../../core/interop/import-run.js';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { diagConfig } from '../api/helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const RECORDER = fileURLToPath(new URL('../fixtures/interop/ragen-val_step0.jsonl', import.meta.url));

let tmp = '';
let project = '';
let exportRunJson = '';
beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'import-text-forms-'));
  project = path.join(tmp, 'project');
  const d = createDispatcher({ host: 'in-process' });
  try {
    await d.api.projects.create({ path: project });
    const run = await d.api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 2 } }, 'exported') });
    exportRunJson = fs.readFileSync(path.join(project, 'runs', run.id, 'run.json'), 'utf8');
  } finally {
    await d.dispose();
  }
});
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

/** Newlines outside double-quoted CSV fields (a field's own line breaks stay as they are, as Excel keeps them). */
function csvRowBreaks(text: string, to: string): string {
  let out = ''; let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    out += ch === '\n' && !quoted ? to : ch;
  }
  return out;
}

type Variant = (text: string, csv: boolean) => string;
const VARIANTS: Record<string, Variant> = {
  'BOM': (t) => `\ufeff${t}`,
  'BOM + CRLF': (t, csv) => `\ufeff${csv ? csvRowBreaks(t, '\r\n') : t.replace(/\n/g, '\r\n')}`,
  'CRLF, no final newline': (t, csv) => (csv ? csvRowBreaks(t, '\r\n') : t.replace(/\n/g, '\r\n')).replace(/(\r\n)+$/, ''),
  'no final newline': (t) => t.replace(/\n+$/, ''),
};

interface Case { name: string; files: Record<string, string>; csv?: string[] }

function valDump(): string {
  const table = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'val_generations.table.json'), 'utf8')) as { data: unknown[][] };
  const output = table.data[0]![2] as string;
  return [1, 2].map((i) => JSON.stringify({ input: 'x', output, score: 0.5, step: 10 + i })).join('\n') + '\n';
}

const CASES = (): Case[] => [
  { name: 'RAGEN recorder JSONL', files: { 'val_step0.jsonl': fs.readFileSync(RECORDER, 'utf8') } },
  { name: 'verl metrics JSONL', files: { 'metrics.jsonl': fs.readFileSync(path.join(FIXTURES, 'metrics.jsonl'), 'utf8') } },
  { name: 'verl validation dump JSONL', files: { '10.jsonl': valDump() } },
  { name: 'verl console log', files: { 'ppo.log': 'noise line\nstep:1 - actor/entropy:0.900 - critic/score:0.500\nstep:2 - actor/entropy:0.800 - critic/score:nan\n' } },
  { name: 'raw_trajectories JSON', files: { 'raw_trajectories_1.json': fs.readFileSync(path.join(FIXTURES, 'raw_trajectories_20250901_120000.json'), 'utf8') } },
  { name: 'W&B table JSON', files: { 'val_generations.table.json': fs.readFileSync(path.join(FIXTURES, 'val_generations.table.json'), 'utf8') } },
  { name: 'W&B table CSV', files: { 'val_generations.csv': fs.readFileSync(path.join(FIXTURES, 'val_generations.csv'), 'utf8') }, csv: ['val_generations.csv'] },
  { name: 'RAGEN Hydra YAML (beside metrics)', files: {
    'config.yaml': 'trainer:\n  total_training_steps: 5\n  experiment_name: text-forms\nes_manager:\n  train:\n    env_groups: 2\n',
    'metrics.jsonl': fs.readFileSync(path.join(FIXTURES, 'metrics.jsonl'), 'utf8') } },
  { name: 'workbench export (run.json, metrics.csv)', files: { 'run.json': exportRunJson,
    'metrics.csv': 'stage,step,time,episodes,diag/x,diag/y\nrl,1,1700000001000,8,0.5,\nrl,2,1700000002000,,0.25,1.5\n' }, csv: ['metrics.csv'] },
];

/** What an import brought in, without the parts that differ by design (run id, file times). */
async function imported(name: string, files: Record<string, string>): Promise<unknown> {
  const src = path.join(tmp, 'src', name);
  fs.mkdirSync(src, { recursive: true });
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(src, file), text);
  const r = await importRagenRun({ projectDir: project, source: src, now: 1, name: 'text forms' });
  const runDir = path.join(project, 'runs', r.runId);
  const lines = (f: string) => (fs.existsSync(path.join(runDir, f)) ? fs.readFileSync(path.join(runDir, f), 'utf8').trim().split('\n').filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>) : []);
  const metrics = lines('metrics.jsonl').map(({ stage, step, values }) => ({ stage, step, values }));
  const episodes = fs.existsSync(path.join(runDir, 'rollouts')) ? fs.readdirSync(path.join(runDir, 'rollouts')).filter((f) => f !== 'index.jsonl')
    .flatMap((f) => lines(path.join('rollouts', f))).map(({ runId: _r, time: _t, ...e }) => e) : [];
  const config = JSON.parse(JSON.stringify(r.record.config).split(JSON.stringify(src).slice(1, -1)).join('<source>')) as unknown;
  return { sources: r.sources, skipped: r.skipped, metrics, episodes, config };
}

const CASE_NAMES = ['RAGEN recorder JSONL', 'verl metrics JSONL', 'verl validation dump JSONL', 'verl console log', 'raw_trajectories JSON',
  'W&B table JSON', 'W&B table CSV', 'RAGEN Hydra YAML (beside metrics)', 'workbench export (run.json, metrics.csv)'];

describe('every importer reads a BOM, CRLF and a missing final newline as the plain file', () => {
  it('the case list is the list of importers tested', () => { expect(CASES().map((c) => c.name)).toEqual(CASE_NAMES); });
  for (const name of CASE_NAMES) {
    it(name, async () => {
      const c = CASES().find((x) => x.name === name)!;   // built here: the export case needs beforeAll's run.json
      const plain = await imported(`${c.name}-plain`, c.files);
      expect((plain as { sources: unknown[] }).sources.length, 'the plain file imports something').toBeGreaterThan(0);
      for (const [variant, change] of Object.entries(VARIANTS)) {
        const files = Object.fromEntries(Object.entries(c.files).map(([f, t]) => [f, change(t, (c.csv ?? []).includes(f))]));
        expect(await imported(`${c.name}-${variant}`, files), `${c.name}: ${variant}`).toEqual(plain);
      }
    }, 180_000);
  }
});
