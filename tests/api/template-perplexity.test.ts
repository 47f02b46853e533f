// templates.checkpoints and templates.perplexity through the dispatcher: malformed requests are
// rejected before any process starts, quick errors (checkpoint, template) come without a child,
// a real call on a smoke checkpoint returns the perplexity computed in a child process while the
// host keeps answering, and the child's own errors come back as API errors with its stderr tail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkbenchClient } from '../../core/api/contract.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { createInProcessClient } from '../../core/host/in-process.js';
import { WorkbenchError } from '../../core/api/errors.js';
import { templatePerplexity } from '../../core/eval/template-perplexity.js';
import { runPreset } from '../train/helpers.js';
import { isolateHome, tempDir } from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<WorkbenchError> {
  try { await p; } catch (err) { return err as WorkbenchError; }
  throw new Error('expected a rejection');
}

let d: Dispatcher;
let api: WorkbenchClient;
let project: string;
let runId: string;
let tinySpa: string;

beforeAll(async () => {
  isolateHome();
  d = createDispatcher({ host: 'in-process' });
  api = createInProcessClient(d);
  project = tempDir('spa-wb-tppl-');
  await api.projects.create({ path: project });
  const run = await api.runs.create({ preset: 'spa', size: 'smoke', config: { env: { id: 'sokoban' } } });
  runId = run.id;
  // a real checkpoint in the run's folder (the bootstrap stage, in-process: quick)
  // a checkpoint is all this file needs: no gate (50 held-out turns at the smoke size; issue 37 item 7)
  const r = await runPreset(project, 'spa', runId, { env: { id: 'sokoban' }, stages: { plan: { order: ['bootstrap'] }, bootstrap: { gateTurns: 0 } } } as never);
  expect(r.outcome).toEqual({ status: 'completed' });
  tinySpa = (await api.templates.get({ name: 'tiny-spa' })).source;
}, 120_000);

afterAll(async () => { await d.dispose({ kill: true }); });

describe('templates.checkpoints', () => {
  it('lists the checkpoints with the latest', async () => {
    const r = await api.templates.checkpoints({ runId });
    expect(r.latest).toBe('bootstrap');
    expect(r.checkpoints).toHaveLength(1);
    expect(r.checkpoints[0]).toMatchObject({ name: 'bootstrap', stage: 'bootstrap', step: 1, role: 'policy' });
  });

  it('unknown run: NotFound', async () => {
    const err = await rejection(api.templates.checkpoints({ runId: 'nope' }));
    expect(err.name).toBe('NotFound');
  });
});

describe('templates.perplexity', () => {
  it('rejects malformed requests with a ValidationError naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ runId }, 'env'],                                                              // env missing
      [{ runId, env: { id: 'sokoban' }, name: 'tiny-spa', samples: 0 }, 'samples'],
      [{ runId, env: { id: 'sokoban' }, name: 'tiny-spa', samples: 1000 }, 'samples'],
      [{ runId, env: { id: 'sokoban' }, name: 'tiny-spa', checkpoint: '../x' }, 'checkpoint'],
      [{ runId, env: { id: 'sokoban' }, name: 'tiny-spa', unexpected: 1 }, 'unexpected'],
      [{ runId: 5, env: { id: 'sokoban' }, name: 'tiny-spa' }, 'runId'],
    ];
    for (const [params, field] of cases) {
      const err = await rejection(d.call('templates.perplexity', params));
      expect(err.name, JSON.stringify(params)).toBe('ValidationError');
      expect(err.message).toContain('templates.perplexity');
      expect(JSON.stringify(err.details)).toContain(field);
    }
    const neither = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' } }));
    expect(neither.name).toBe('ValidationError');
    expect(neither.message).toContain('not neither');
    const both = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' }, name: 'tiny-spa', source: tinySpa }));
    expect(both.message).toContain('not both');
  });

  it('answers quick errors without a child process: run, checkpoint, template', async () => {
    const run = await rejection(api.templates.perplexity({ runId: 'nope', env: { id: 'sokoban' }, name: 'tiny-spa' }));
    expect(run.name).toBe('NotFound');
    const cp = await rejection(api.templates.perplexity({ runId, checkpoint: 'rl-7', env: { id: 'sokoban' }, name: 'tiny-spa' }));
    expect(cp.name).toBe('NotFound');
    expect(cp.message).toContain('it has: bootstrap');
    expect(cp.details).toMatchObject({ where: 'templates.perplexity checkpoint', received: '"rl-7"' });
    const bad = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' }, source: tinySpa.replace('{{ grid }}', '{{ grid | nofilter }}') }));
    expect(bad.name).toBe('ValidationError');
    expect(bad.message).toContain('nofilter');
    expect(bad.details.issues?.length).toBeGreaterThan(0);
    const unknown = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' }, name: 'no-such-template' }));
    expect(unknown.name).toBe('NotFound');
  });

  it('computes the editor text in a child process while the host keeps answering', async () => {
    let done = false;
    const pending = api.templates.perplexity({ runId, env: { id: 'sokoban' }, source: tinySpa, samples: 4, seedStart: 0 });
    void pending.then(() => { done = true; }, () => { done = true; });
    const info = await api.system.info();
    expect(info.host).toBe('in-process');
    expect(done).toBe(false);                                   // the host answered while the child computes (an order, not a time)
    const second = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' }, name: 'tiny-spa' }));
    expect(second.name).toBe('Conflict');
    const r = await pending;
    expect(Number.isFinite(r.perplexity)).toBe(true);
    expect(r.perplexity).toBeGreaterThan(1);
    expect(r.rows).toBe(4);
    expect(r.checkpoint.name).toBe('bootstrap');
    expect(r.template.from).toBe('text');
    expect(r.processSeconds).toBeGreaterThanOrEqual(r.wallSeconds);
    // the same number as in-process, and as the preset by name
    const direct = await templatePerplexity({ project, runId, env: { id: 'sokoban' }, template: { name: 'tiny-spa' }, samples: 4, seedStart: 0 });
    expect(r.perplexity).toBeCloseTo(direct.perplexity, 8);
    const byName = await api.templates.perplexity({ runId, checkpoint: 'bootstrap', env: { id: 'sokoban' }, name: 'tiny-spa', samples: 4, seedStart: 0 });
    expect(byName.template.from).toBe('preset');
    expect(byName.perplexity).toBeCloseTo(r.perplexity, 8);
    // default seeds: the run's evaluation range
    const defaults = await api.templates.perplexity({ runId, env: { id: 'sokoban' }, name: 'tiny-spa', samples: 1 });
    expect(defaults.seedStart).toBe(3_000_000);
  }, 300_000);   // a hang guard: four computations in child processes passed 120 s at load 19

  it('turns the child\'s failure into an API error with its message and stderr tail', async () => {
    // validates here, but renders an empty state: only the child finds out
    const empty = tinySpa.replace('{{ grid }}\\n{{ spa_coordinates }}', '{{ nothing }}');
    expect(empty).not.toBe(tinySpa);
    const err = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' }, source: empty, samples: 2 }));
    expect(err.name).toBe('ValidationError');
    expect(err.message).toContain('renders an empty state');
    expect(Array.isArray((err.details as { stderrTail?: unknown }).stderrTail)).toBe(true);
    expect(String((err.details as { stderrTail: string[] }).stderrTail.join('\n'))).toContain('renders an empty state');
  }, 180_000);

  it('stops a computation that runs past its timeout', async () => {
    const err = await rejection(api.templates.perplexity({ runId, env: { id: 'sokoban' }, name: 'tiny-spa', samples: 256, timeoutSeconds: 1 }));
    expect(err.name).toBe('Timeout');
    expect(err.message).toContain('no result within 1 s');
  }, 180_000);
});
