// The bases shipped in this repository: resources/bases/frozenlake-compact (the compact format's "nothing moves" base) is
// the one every arm of study v2 uses at the quick and standard sizes, and resources/bases/frozenlake (study v1's, 2,100
// steps in four phases) still serves the v1 settings: descriptors match, files match their hashes, recorded gates passed. `base ship --checkpoint`
// re-describes a checkpoint trained by hand and rejects bad input with a clear error.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveRunConfig } from '../../core/engine/config.js';
import '../../core/engine/presets.js';
import { bootstrapTemplates } from '../../core/train/bootstrap.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { baseDescriptor, findShippedBase, shippedBasesDir, type ShippedBaseRecord } from '../../core/train/shipped-base.js';
import { TINY_BOOTSTRAP, TINY_ROLLOUT } from '../../core/train/presets.js';

const CLI = join(__dirname, '..', '..', 'bin', 'spa-workbench.mjs');

describe('the shipped FrozenLake bases', () => {
  for (const size of ['quick', 'standard'] as const) {
    it(`the compact base (resources/bases/frozenlake-compact) serves every arm of study v2 at size ${size}`, async () => {
      for (const preset of ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans']) {
        const r = resolveRunConfig({ preset, size, set: { 'env.id': 'frozenlake' } });
        expect(r.issues).toEqual([]);
        const { templates } = bootstrapTemplates(r.config!);
        const found = await findShippedBase(baseDescriptor(r.config!, templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t))));
        expect({ preset, kind: found.kind, differs: found.kind === 'mismatch' ? found.differs : [] }).toEqual({ preset, kind: 'match', differs: [] });
        if (found.kind !== 'match') continue;
        expect(found.dir.endsWith('frozenlake-compact')).toBe(true);
        expect((found.record.gate as { passed: boolean }).passed).toBe(true);
        expect(found.record.config.stages.bootstrap).toMatchObject({ prediction: 'copy', templates: ['tiny-compact-plain', 'tiny-compact'] });
      }
    });
  }

  it('the study v1 base (resources/bases/frozenlake) still serves the v1 settings (tiny-spa, 3 turns, 2,100 steps)', async () => {
    const r = resolveRunConfig({
      preset: 'spa', size: 'standard',
      set: { 'env.id': 'frozenlake', 'template.preset': 'tiny-spa', 'stages.rollout': TINY_ROLLOUT, 'stages.bootstrap': TINY_BOOTSTRAP, 'stages.selfplay.alignPlan': false },
    });
    expect(r.issues).toEqual([]);
    const { templates } = bootstrapTemplates(r.config!);
    const found = await findShippedBase(baseDescriptor(r.config!, templates.map((t) => (typeof t === 'string' ? builtinTemplate(t) : t))));
    expect(found.kind === 'match' && found.dir.endsWith('frozenlake')).toBe(true);
    if (found.kind !== 'match') return;
    expect(found.record.config.stages.bootstrap).toMatchObject({ steps: 900, extend: [{ steps: 400 }, { steps: 400 }, { steps: 400 }] });
  });

  it('base ship --checkpoint writes the same descriptor, and refuses bad input', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'ship-')), 'frozenlake');
    const base = join(shippedBasesDir(), 'frozenlake-compact');   // trained at today's quick settings (base build --env frozenlake)
    const gateFile = join(mkdtempSync(join(tmpdir(), 'gate-')), 'gate.json');
    const shipped = JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')).extra.shippedBase as ShippedBaseRecord;
    writeFileSync(gateFile, JSON.stringify(shipped.gate));
    execFileSync(process.execPath, [CLI, 'base', 'ship', '--checkpoint', base, '--env', 'frozenlake', '--gate', gateFile, '--out', out, '--command', 'test'],
      { stdio: 'pipe' });
    const again = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).extra.shippedBase as ShippedBaseRecord;
    expect(again.matchKey).toBe(shipped.matchKey);
    expect(again.dataSeeds).toEqual(shipped.dataSeeds);
    const bad = (args: string[]) => spawnSync(process.execPath, [CLI, 'base', 'ship', ...args, '--command', 'x'], { encoding: 'utf8' });
    expect(bad(['--checkpoint', base]).stderr).toMatch(/--checkpoint needs --env/);
    expect(bad(['--checkpoint', tmpdir(), '--env', 'frozenlake']).stderr).toMatch(/not a checkpoint folder/);
    expect(bad(['--checkpoint', base, '--env', 'frozenlake', '--gate', join(tmpdir(), 'no-such-gate.json'), '--out', out]).stderr).toMatch(/no such file/);
    expect(bad(['--checkpoint', base, '--env', 'frozenlake', '--set', 'stages.bootstrap.nope=1', '--out', out]).stderr).toMatch(/does not resolve/);
    expect(bad([]).stderr).toMatch(/give --project and --run/);
  }, 120_000);
});
