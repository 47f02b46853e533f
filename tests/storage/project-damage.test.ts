// A damaged project must never hide data or refuse to open (issue 10): D4 (a damaged or missing
// run.json keeps the run visible and warns on every open), D5 (a null in the run index, a template
// file named after an Object.prototype key), D6 (such names are plain keys), D9 (a project on a
// read-only file system opens read-only).
import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { ProjectStore, WORKBENCH_JSON } from '../../core/storage/project-store.js';
import { RunData } from '../../core/storage/run-data.js';
import { diagConfig, isolateHome, tempDir } from '../api/helpers.js';
import { withWriteFault } from './fs-faults.js';

const stores: ProjectStore[] = [];
afterEach(() => { for (const s of stores.splice(0)) s.close(); });
const open = async (dir: string, o = {}) => { const s = await ProjectStore.open(dir, o); stores.push(s); return s; };

/** A project with one created run (not started). */
async function projectWithRun(): Promise<{ dir: string; runId: string }> {
  isolateHome();
  const dir = tempDir();
  const d = createDispatcher({ host: 'in-process' });
  const api = createInProcessClient(d);
  await api.projects.create({ path: dir });
  const run = await api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 1, delayMs: 1 } }) });
  await d.dispose();
  return { dir, runId: run.id };
}

describe('damaged projects', () => {
  it('a damaged run.json keeps the run listed and is reported on every open, not only the first (D4)', async () => {
    const { dir, runId } = await projectWithRun();
    fs.writeFileSync(path.join(dir, 'runs', runId, 'run.json'), '{"id": "torn');
    for (let i = 0; i < 2; i++) {
      const s = await open(dir);
      expect(s.listRuns().map((r) => r.id)).toEqual([runId]);
      expect(s.warnings.join('\n')).toMatch(new RegExp(`runs/${runId}/run.json (could not be read|is missing).*doctor`));
      expect(s.damagedRuns.map((r) => r.id)).toEqual([runId]);
      expect(() => s.readRun(runId)).toThrow(/run\.json/);
      s.close(); stores.pop();
    }
    // the damaged bytes are kept, never overwritten
    const aside = fs.readdirSync(path.join(dir, 'runs', runId)).filter((f) => f.startsWith('run.json.corrupt-'));
    expect(aside.length).toBe(1);
    expect(fs.readFileSync(path.join(dir, 'runs', runId, aside[0]!), 'utf8')).toBe('{"id": "torn');
  });

  it('a missing run.json with no index entry is still reported on each open (D4)', async () => {
    const { dir, runId } = await projectWithRun();
    const wb = JSON.parse(fs.readFileSync(path.join(dir, WORKBENCH_JSON), 'utf8'));
    wb.runs = [];
    fs.writeFileSync(path.join(dir, WORKBENCH_JSON), JSON.stringify(wb));
    fs.rmSync(path.join(dir, 'runs', runId, 'run.json'));
    for (let i = 0; i < 2; i++) {
      const s = await open(dir);
      expect(s.warnings.join('\n')).toContain(`runs/${runId} has no run.json`);
      s.close(); stores.pop();
    }
  });

  it('a null in runs[] or a template file named constructor@x does not stop the project from opening (D5, D6)', async () => {
    const { dir, runId } = await projectWithRun();
    const wb = JSON.parse(fs.readFileSync(path.join(dir, WORKBENCH_JSON), 'utf8'));
    wb.runs.unshift(null);
    fs.writeFileSync(path.join(dir, WORKBENCH_JSON), JSON.stringify(wb));
    const version = { name: 'constructor', hash: 'abc123', createdAt: 1, description: '', parent: null, source: '{}' };
    fs.writeFileSync(path.join(dir, 'templates', 'constructor@abc123.json'), JSON.stringify(version));
    const s = await open(dir);
    expect(s.listRuns().map((r) => r.id)).toEqual([runId]);
    expect(s.warnings.join('\n')).toMatch(/runs\[0\] is not a run summary \(null\)/);
    expect(s.templateVersions('__proto__')).toEqual([]);
    expect(s.readTemplate('toString')).toBeNull();
    expect(s.readTemplate('hasOwnProperty')).toBeNull();
  });

  it('a project on a read-only file system opens read-only; reads work, writes are refused clearly (D9)', async () => {
    const { dir, runId } = await projectWithRun();
    await withWriteFault(dir, 'EROFS', async () => {
      const s = await open(dir);
      expect(s.info().readOnly).toBe(true);
      expect(s.warnings.join('\n')).toMatch(/opened read-only/);
      expect(s.listRuns().map((r) => r.id)).toEqual([runId]);
      expect(s.readRun(runId)?.id).toBe(runId);
      await expect(s.flush()).rejects.toThrow(/read-only/);
      s.close(); stores.pop();
      // and through the API, as the UI and the CLI use it
      const d = createDispatcher({ host: 'in-process' });
      const api = createInProcessClient(d);
      try {
        expect((await api.projects.open({ path: dir })).readOnly).toBe(true);
        expect((await api.runs.list({})).runs.map((r) => r.id)).toEqual([runId]);
        expect((await api.runs.get({ runId })).id).toBe(runId);
      } finally { await d.dispose(); }
    });
    expect(fs.existsSync(path.join(dir, '.workbench.lock'))).toBe(false);
  });
});

describe('rows of the wrong shape (D13)', () => {
  it('datasets.query skips valid JSON rows that are not SFT rows and counts them', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'datasets'));
    const good = { id: 'e1-t0', episodeId: 'e1', seed: 1, turn: 0, prompt: 'p', original: 'o', corrected: 'c' };
    fs.writeFileSync(path.join(dir, 'datasets', 'sft-train.jsonl'), `${JSON.stringify(good)}\n5\nnull\n{"id": 3}\n${JSON.stringify({ ...good, id: 'e1-t1' })}\n`);
    const page = new RunData('r', dir).datasetPage('train', 0, 10);
    expect(page.rows.map((r) => r.id)).toEqual(['e1-t0', 'e1-t1']);
    expect(page.skipped).toBe(3);
    expect(page.total).toBe(5);
  });
});
