// Malformed requests to every API method (the contract's own method list), in-process, against
// a real project with a run and a saved template, so that real ids reach the handlers' deeper
// code. Engines are never started (NoEngineLauncher). Returns the tally and what was written
// outside the places a request may write (the project, the isolated home, projects it created).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { apiMethodNames } from '../../core/api/contract.js';
import { createDispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { listTree, newTally, NoEngineLauncher, probe, randomRequest, rng, typedRequest, type Tally } from './fuzz-lib.js';

export interface ApiFuzzResult { tally: Tally; methods: number; outside: string[]; seconds: number; enginesLaunched: number }

export async function runApiFuzz(o: { seed: number; perMethod: number; hangMs: number }): Promise<ApiFuzzResult> {
  const started = Date.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-wb-fuzz-'));
  const home = path.join(root, 'home');
  const cwd = path.join(root, 'cwd');
  const project = path.join(root, 'project');
  fs.mkdirSync(home); fs.mkdirSync(cwd);
  const prevHome = process.env.SPA_WORKBENCH_HOME;
  const prevCwd = process.cwd();
  process.env.SPA_WORKBENCH_HOME = home;
  process.chdir(cwd);                       // relative paths in requests land inside the sandbox
  const launcher = new NoEngineLauncher();
  const d = createDispatcher({ host: 'in-process', launcher, renderTimeoutMs: 10_000 });
  const api = createInProcessClient(d);
  const created = new Set<string>();
  try {
    await api.projects.create({ path: project });
    const run = await api.runs.create({ config: { name: 'fuzz', method: 'sft-only', size: 'smoke', stages: { plan: { order: ['diag-wait'] }, 'diag-wait': { steps: 1 } } } });
    const tpl = await api.templates.get({ name: 'spa' });
    await api.templates.save({ name: 'fuzz-tpl', source: tpl.source });
    const extra = [run.id, 'fuzz-tpl', tpl.hash, project, 'diag-wait', 'rl', 'sft', 'eval', 'train', 'val'];
    const before = new Set(listTree(root));
    const tally = newTally();
    const methods = apiMethodNames();
    const r = rng(o.seed);
    for (const method of methods) {
      for (let i = 0; i < o.perMethod; i++) {
        const request = i % 2 === 0 ? typedRequest(r, method, extra) : randomRequest(r, method, extra);   // half reach the handlers
        if (method === 'projects.create' || method === 'projects.open') {
          const p = (request as { path?: unknown } | null)?.path;
          if (typeof p === 'string') created.add(path.resolve(cwd, p));
        }
        await probe(tally, method, request, () => d.call(method, request), o.hangMs);
        if (d.projectPath() !== project) {
          try { await api.projects.open({ path: project }); } catch { /* a run or study still active: next call sees it */ }
        }
      }
    }
    // a JSON round trip of odd method names too (the wire accepts any string)
    for (const name of ['__proto__.toString', 'constructor.name', 'runs.__proto__', 'runs.constructor', '', '.', 'runs.', '.list', 'x'.repeat(10_000)]) {
      await probe(tally, name, {}, () => d.call(name, {}), o.hangMs);
    }
    const allowed = (rel: string) => {
      const abs = path.join(root, rel);
      if (rel === 'project' || rel.startsWith(`project${path.sep}`) || rel === 'home' || rel.startsWith(`home${path.sep}`)) return true;
      for (const c of created) if (abs === c || abs.startsWith(c + path.sep) || c.startsWith(abs + path.sep)) return true;
      return false;
    };
    const outside = listTree(root).filter((p) => !before.has(p) && !allowed(p));
    return { tally, methods: methods.length, outside, seconds: (Date.now() - started) / 1000, enginesLaunched: launcher.launched };
  } finally {
    await d.dispose({ kill: true });
    process.chdir(prevCwd);
    if (prevHome === undefined) delete process.env.SPA_WORKBENCH_HOME; else process.env.SPA_WORKBENCH_HOME = prevHome;
    fs.rmSync(root, { recursive: true, force: true });
  }
}
