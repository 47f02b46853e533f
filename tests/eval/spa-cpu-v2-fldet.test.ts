// Study spa-cpu-v2's deterministic half as committed in docs/results/spa-cpu-v2/fldet: the table, criterion 1 and the decision
// rebuild from the committed records and checks (runs/*.json, wm-check/*.json) byte for byte, so a reader can trust that
// the report's numbers come from the records and that the rule (decide.mjs, criterion1.mjs) printed what the report quotes.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { writeStudyReport } from '../../core/eval/study.js';
import { readStudyRecords } from '../../core/eval/study-records.js';

const ROOT = resolve(__dirname, '../..');
const DIR = join(ROOT, 'docs/results/spa-cpu-v2/fldet');
const METHODS = ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans'];

describe('spa-cpu-v2 fldet (committed results)', () => {
  it('holds 4 arms × 3 seeds, each evaluated on the same 128 puzzles × 8', () => {
    const read = readStudyRecords([DIR], 'spa-cpu-v2-fldet');
    expect(read.notes).toEqual([]);
    expect(read.runs.map((r) => `${r.method}-s${r.seed}`).sort()).toEqual(METHODS.flatMap((m) => [0, 1, 2].map((s) => `${m}-s${s}`)).sort());
    const seeds = read.runs.map((r) => r.eval!.perPuzzle.map((p) => `${p.seed}:${p.n}`).join());
    expect(new Set(seeds).size).toBe(1);
    expect(read.runs[0]!.eval!.perPuzzle.length).toBe(128);
  });

  it('table.md, table.csv and study.json (decide.mjs reads it) rebuild from the records', () => {
    const out = mkdtempSync(join(tmpdir(), 'fldet-table-'));
    writeStudyReport(readStudyRecords([DIR], 'spa-cpu-v2-fldet').runs, { name: 'spa-cpu-v2-fldet', methods: METHODS, envs: ['frozenlake'] }, out);
    for (const f of ['table.md', 'table.csv', 'study.json']) expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(DIR, f), 'utf8'));
  });

  it('criterion1.md and decision.md are what the scripts print on the committed checks and table', () => {
    const run = (script: string) => execFileSync(process.execPath, [join(ROOT, 'docs/results/spa-cpu-v2', script), 'docs/results/spa-cpu-v2/fldet'],
      { cwd: ROOT, encoding: 'utf8' });
    expect(run('criterion1.mjs')).toBe(readFileSync(join(DIR, 'criterion1.md'), 'utf8'));
    expect(readdirSync(join(DIR, 'wm-check')).length).toBe(15);   // SPA and SPA-masked after SFT and at the end, state estimation at the end
    expect(run('decide.mjs')).toBe(readFileSync(join(DIR, 'decision.md'), 'utf8'));
  });
});
