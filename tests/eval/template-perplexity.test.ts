// Live state perplexity of a template under a real checkpoint (a smoke run's bootstrap stage):
// finite and > 1, one row per sample, template-dependent, equal to statePerplexity on rows built
// independently here, saved templates by name and name@hash, clear errors for bad inputs, and
// the CLI command (text, --json, JSON errors) with its wall time.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runPreset, tempProject } from '../train/helpers.js';
import {
  findCheckpoint, latestCheckpoint, listRunCheckpoints, templatePerplexity, TemplatePerplexityError, type TemplatePerplexityOptions,
} from '../../core/eval/template-perplexity.js';
import { statePerplexity } from '../../core/train/perplexity.js';
import { loadRuntime } from '../../core/train/runtime.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { createEnv } from '../../core/envs/index.js';
import { Rng } from '../../core/util/rng.js';
import { EpisodeSession, randomWellFormedResponse } from '../../core/prompts/session.js';
import { templateHash, validateTemplate, type PromptTemplate } from '../../core/prompts/template.js';

const run = promisify(execFile);
const project = tempProject('spa-tppl-');
const RUN = 'smoke-tp';

/** A compact coordinates-only template for the tiny smoke model: the SPA coordinate line, no grid. */
const COORDS: PromptTemplate = {
  ...builtinTemplate('tiny-spa'),
  name: 'tiny-coords',
  description: 'the SPA coordinate line only',
  parts: { ...builtinTemplate('tiny-spa').parts, state: '{{ spa_coordinates }}' },
};
const COORDS_TEXT = JSON.stringify(COORDS, null, 2);

async function failure(p: Promise<unknown>): Promise<TemplatePerplexityError> {
  try { await p; } catch (err) { return err as TemplatePerplexityError; }
  throw new Error('expected a failure');
}

const base = (over: Partial<TemplatePerplexityOptions> = {}): TemplatePerplexityOptions => ({
  project, runId: RUN, env: { id: 'sokoban' }, template: { name: 'tiny-spa' }, samples: 4, seedStart: 100, ...over,
});

beforeAll(async () => {
  // a checkpoint is all this file needs: no gate (50 held-out turns at the smoke size; issue 37 item 7)
  const r = await runPreset(project, 'spa', RUN, { env: { id: 'sokoban' }, stages: { plan: { order: ['bootstrap'] }, bootstrap: { gateTurns: 0 } } } as never);
  expect(r.outcome).toEqual({ status: 'completed' });
}, 120_000);

describe('templatePerplexity on a smoke checkpoint', () => {
  it('lists the run\'s checkpoints and picks the latest by default', () => {
    const list = listRunCheckpoints(project, RUN);
    expect(list.map((c) => c.name)).toEqual(['bootstrap']);
    expect(list[0]).toMatchObject({ stage: 'bootstrap', step: 1, role: 'policy' });
    expect(latestCheckpoint(list)?.name).toBe('bootstrap');
    expect(findCheckpoint(project, RUN).name).toBe('bootstrap');
  });

  it('is finite and > 1, with one row per sample, and depends on the template', async () => {
    const spa = await templatePerplexity(base());
    expect(Number.isFinite(spa.perplexity)).toBe(true);
    expect(spa.perplexity).toBeGreaterThan(1);
    expect(spa.meanNll).toBeCloseTo(Math.log(spa.perplexity), 10);
    expect(spa.rows).toBe(4);
    expect(spa.samples).toBe(4);
    expect(spa.seedStart).toBe(100);
    expect(spa.tokens).toBeGreaterThan(0);
    expect(spa.checkpoint.name).toBe('bootstrap');
    expect(spa.template).toEqual({ name: 'tiny-spa', hash: templateHash(builtinTemplate('tiny-spa')), from: 'preset' });
    expect(spa.maxContext).toBe(1024);
    expect(spa.longestRow).toBeLessThanOrEqual(1024);
    expect(typeof spa.backend).toBe('string');
    expect(spa.wallSeconds).toBeGreaterThan(0);

    const grid = await templatePerplexity(base({ template: { name: 'tiny-raw-grid' } }));
    expect(grid.rows).toBe(4);
    expect(grid.tokens).toBeLessThan(spa.tokens);              // the coordinate line adds state tokens
    expect(grid.perplexity).not.toBeCloseTo(spa.perplexity, 3);

    // deterministic: the same request gives the same number
    expect((await templatePerplexity(base())).perplexity).toBe(spa.perplexity);
  }, 180_000);

  it('the coordinates template (as editor text) equals statePerplexity on rows built directly', async () => {
    const live = await templatePerplexity(base({ template: { source: COORDS_TEXT }, samples: 5, seedStart: 7 }));
    expect(live.template.from).toBe('text');
    expect(live.template.hash).toBe(templateHash(COORDS));
    // the documented recipe: first prompt + a random well-formed turn with the true states
    const rows = [7, 8, 9, 10, 11].map((seed) => {
      const session = new EpisodeSession(createEnv('sokoban', {}), COORDS, { seed, responseFormat: 'world-model' });
      const response = randomWellFormedResponse(session, new Rng(seed));
      expect(response).toContain(`<observation>\n${session.stateText()}\n</observation>`);
      return { messages: [...session.messages(), { role: 'assistant' as const, content: response }] };
    });
    const runtime = await loadRuntime(join(project, 'runs', RUN, 'checkpoints', 'bootstrap'), { valueHead: false });
    try {
      const direct = await statePerplexity(runtime, rows, runtime.maxContext);
      expect(direct.rows).toBe(5);
      expect(live.tokens).toBe(direct.tokens);
      expect(live.perplexity).toBeCloseTo(direct.perplexity, 8);
      expect(live.meanNll).toBeCloseTo(direct.meanNll, 10);
    } finally {
      runtime.dispose();
    }
  }, 180_000);

  it('resolves a saved template by name and by name@hash', async () => {
    const checked = validateTemplate(COORDS_TEXT);
    if (!checked.ok) throw new Error('fixture does not validate');
    mkdirSync(join(project, 'templates'), { recursive: true });
    writeFileSync(join(project, 'templates', `mine@${checked.hash}.json`), JSON.stringify({ name: 'mine', hash: checked.hash, createdAt: 1, description: '', parent: null, source: COORDS_TEXT }));
    const byName = await templatePerplexity(base({ template: { name: 'mine' } }));
    const byHash = await templatePerplexity(base({ template: { name: `mine@${checked.hash.slice(0, 10)}` } }));
    const byText = await templatePerplexity(base({ template: { source: COORDS_TEXT } }));
    expect(byName.template).toEqual({ name: 'mine', hash: checked.hash, from: 'saved' });
    expect(byHash.perplexity).toBe(byName.perplexity);
    expect(byText.perplexity).toBe(byName.perplexity);
    const err = await failure(templatePerplexity(base({ template: { name: 'mine@ffff' } })));
    expect(err.code).toBe('NotFound');
    expect(err.message).toContain(checked.hash.slice(0, 12));
  }, 180_000);
});

describe('bad inputs give clear errors', () => {
  it('unknown run: NotFound naming the runs that exist', async () => {
    const err = await failure(templatePerplexity(base({ runId: 'no-such-run' })));
    expect(err).toBeInstanceOf(TemplatePerplexityError);
    expect(err.code).toBe('NotFound');
    expect(err.message).toContain('"no-such-run" does not exist');
    expect(err.message).toContain(RUN);
    expect(err.details.where).toBe('runId');
    const bad = await failure(templatePerplexity(base({ runId: '../escape' })));
    expect(bad.code).toBe('ValidationError');
  });

  it('missing checkpoint: NotFound listing the ones that exist', async () => {
    const err = await failure(templatePerplexity(base({ checkpoint: 'rl-99' })));
    expect(err.code).toBe('NotFound');
    expect(err.message).toContain('no checkpoint "rl-99"');
    expect(err.message).toContain('bootstrap');
    expect(err.details).toMatchObject({ where: 'checkpoint', expected: 'one of: bootstrap', received: '"rl-99"' });
  });

  it('a run without checkpoints says so', async () => {
    mkdirSync(join(project, 'runs', 'empty-run'), { recursive: true });
    const err = await failure(templatePerplexity(base({ runId: 'empty-run' })));
    expect(err.code).toBe('NotFound');
    expect(err.message).toContain('has no checkpoint yet');
  });

  it('a template that does not validate or does not render', async () => {
    const broken = JSON.stringify({ ...COORDS, parts: { ...COORDS.parts, state: '{{ grid | nofilter }}' } });
    const e1 = await failure(templatePerplexity(base({ template: { source: broken } })));
    expect(e1.code).toBe('ValidationError');
    expect(e1.message).toContain('nofilter');
    expect(e1.details.issues?.[0]?.path).toBe('state');
    const e2 = await failure(templatePerplexity(base({ template: { source: '{ not json' } })));
    expect(e2.code).toBe('ValidationError');
    expect(e2.message).toMatch(/not valid JSON/);
    const empty = JSON.stringify({ ...COORDS, parts: { ...COORDS.parts, state: '{{ nothing_here }}' } });
    const e3 = await failure(templatePerplexity(base({ template: { source: empty } })));
    expect(e3.code).toBe('ValidationError');
    expect(e3.message).toContain('renders an empty state');
    const e4 = await failure(templatePerplexity(base({ template: { name: 'no-such-template' } })));
    expect(e4.code).toBe('NotFound');
    expect(e4.message).toContain('tiny-spa');
  });

  it('a template whose rows do not fit the model context', async () => {
    const err = await failure(templatePerplexity(base({ template: { name: 'spa' } })));   // the released prompt: ~1.4k characters
    expect(err.code).toBe('ValidationError');
    expect(err.message).toContain('does not fit the model context');
    expect(err.message).toContain('context of 1024 tokens');
    expect(err.details.expected).toBe('at most 1024 tokens');
    expect(err.details.received).toMatch(/^\d+ tokens$/);
  }, 180_000);

  it('bad samples, env and env options', async () => {
    expect((await failure(templatePerplexity(base({ samples: 0 })))).details.where).toBe('samples');
    expect((await failure(templatePerplexity(base({ samples: 1.5 })))).code).toBe('ValidationError');
    const env = await failure(templatePerplexity(base({ env: { id: 'chess' } })));
    expect(env.code).toBe('NotFound');
    expect(env.message).toContain('sokoban');
    const opts = await failure(templatePerplexity(base({ env: { id: 'sokoban', options: { width: 'wide' } } })));
    expect(opts.code).toBe('ValidationError');
    expect(opts.details.where).toBe('env.options');
  });
});

describe('spa-workbench template perplexity', () => {
  const cli = (args: string[]) => run(process.execPath, ['bin/spa-workbench.mjs', 'template', 'perplexity', '--project', project, '--run', RUN, ...args], { cwd: process.cwd(), timeout: 240_000 });   // a hang guard: one call took 69 s at load 15

  it('prints JSON equal to the in-process result (8 samples, timed)', async () => {
    const started = performance.now();
    const { stdout } = await cli(['--env', 'sokoban', '--template', 'tiny-spa', '--samples', '8', '--seed-start', '0', '--json']);
    const wall = (performance.now() - started) / 1000;
    const r = JSON.parse(stdout) as { perplexity: number; rows: number; wallSeconds: number };
    const inProcess = await templatePerplexity(base({ samples: 8, seedStart: 0 }));
    expect(r.rows).toBe(8);
    expect(r.perplexity).toBeCloseTo(inProcess.perplexity, 8);
    console.log(`template perplexity, smoke checkpoint, 8 samples: ${wall.toFixed(2)} s wall for the command (${r.wallSeconds} s inside: load + scoring)`);
  }, 180_000);

  it('reads template text from stdin and reports errors as JSON with exit code 1', async () => {
    const child = execFile(process.execPath, ['bin/spa-workbench.mjs', 'template', 'perplexity', '--project', project, '--run', RUN, '--env', 'sokoban', '--template-file', '-', '--samples', '2', '--json']);
    child.stdin!.end(COORDS_TEXT);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += String(c); });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect((JSON.parse(out) as { template: { from: string } }).template.from).toBe('text');

    const err = await cli(['--env', 'sokoban', '--checkpoint', 'nope', '--json']).then(() => null, (e: { code: number; stdout: string; stderr: string }) => e);
    expect(err?.code).toBe(1);
    const body = JSON.parse(err!.stdout) as { error: { name: string; message: string; details: { where: string } } };
    expect(body.error.name).toBe('NotFound');
    expect(body.error.message).toContain('bootstrap');
    expect(body.error.details.where).toBe('checkpoint');
    expect(err!.stderr).toContain('error: run smoke-tp has no checkpoint "nope"');

    const usage = await cli(['--env', 'sokoban', '--samples', 'many']).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(usage?.code).toBe(1);
    expect(usage!.stderr).toContain('--samples: expected an integer from 1 to 256, received "many"');
  }, 180_000);
});
