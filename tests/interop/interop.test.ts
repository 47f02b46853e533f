// SPA/RAGEN interop: the export bundle read back by the Python tools the cluster side uses
// (pyarrow, pandas, omegaconf/hydra), the RAGEN env renderer against the workbench template, the
// recorder run by Python, import of every source kind, malformed inputs, and the round trip.
// Needs python3 with pyarrow, pandas, hydra-core, omegaconf (.ci/run installs them).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exportSpaRagenBundle, hydraConfig, unknownRagenKeys, INTEROP_RESOURCES } from '../../core/interop/export-bundle.js';
import { gridPart, episodeFromRecorderLine, RAGEN_ACTION_IDS } from '../../core/interop/ragen-episodes.js';
import { parseCsv } from '../../core/interop/import-run.js';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { previewPrompt } from '../../core/prompts/index.js';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';
import { makeWorkbenchRun, runPython, toRagenCache, type FixtureRun } from './workbench-run.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const RECORDER = path.join(INTEROP_RESOURCES, 'ragen_recorder.py');
let tmp: string;
let run: FixtureRun;
let bundle: string;
let d: Dispatcher;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-interop-'));
  d = createDispatcher({ host: 'in-process' });
  await d.api.projects.create({ path: path.join(tmp, 'project') });
  run = await makeWorkbenchRun(path.join(tmp, 'project'), { games: 6 });
  await d.dispose();
  d = createDispatcher({ host: 'in-process' });
  await d.api.projects.open({ path: path.join(tmp, 'project') });   // the index picks the fixture run up from its run.json
  bundle = path.join(tmp, 'bundle');
  await d.api.runs.exportBundle({ runId: run.runId, out: bundle });
}, 120_000);

afterAll(async () => {
  await d?.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const py = (code: string, ...args: string[]) => runPython(['-c', code, ...args]);

describe('export bundle (spa-ragen)', () => {
  it('wm_*.parquet reads back in pyarrow and pandas with prompt as a list of {role, content}, equal to the JSONL rows', () => {
    const out = py(`
import json, sys, pyarrow.parquet as pq, pandas as pd
d = sys.argv[1]
res = {}
for split in ('train', 'val'):
    t = pq.read_table(f'{d}/wm_{split}.parquet')
    df = pd.read_parquet(f'{d}/wm_{split}.parquet')
    rows = [json.loads(l) for l in open(f'{d}/wm_{split}.jsonl', encoding='utf-8')]
    # what SPA's sft/spa_sft_dataset.py does: dataframe[prompt_key] -> messages for apply_chat_template
    prompts = df['prompt']
    ok = all([{'role': m['role'], 'content': m['content']} for m in prompts[i]] == rows[i]['prompt'] for i in range(len(rows)))
    res[split] = {'columns': list(df.columns), 'type': str(t.schema.field('prompt').type), 'n': len(df), 'jsonl': len(rows), 'equal': ok,
                  'last_role': [prompts[i][-1]['role'] for i in range(len(df))], 'response_equal': list(df['response']) == [r['response'] for r in rows]}
print(json.dumps(res))
`, path.join(bundle, 'data'));
    const res = JSON.parse(out) as Record<string, { columns: string[]; type: string; n: number; jsonl: number; equal: boolean; last_role: string[]; response_equal: boolean }>;
    const sftRows = fs.readFileSync(path.join(run.runDir, 'datasets/sft-train.jsonl'), 'utf8').trim().split('\n').length;
    expect(res.train!.n).toBe(sftRows);
    expect(res.train!.n).toBeGreaterThan(0);
    for (const split of ['train', 'val']) {
      expect(res[split]!.columns).toEqual(['data_source', 'prompt', 'response', 'ability', 'reward_model', 'extra_info']);
      expect(res[split]!.type).toBe('list<element: struct<content: string, role: string>>');
      expect(res[split]!.n).toBe(res[split]!.jsonl);
      expect(res[split]!.equal).toBe(true);
      expect(res[split]!.response_equal).toBe(true);
      expect(new Set(res[split]!.last_role)).toEqual(new Set(['user']));
    }
  });

  it('the pandas rebuild script writes the same rows', () => {
    const copy = path.join(tmp, 'rebuild');
    fs.cpSync(path.join(bundle, 'data'), copy, { recursive: true });
    for (const f of ['wm_train.parquet', 'wm_val.parquet']) fs.rmSync(path.join(copy, f));
    runPython(['-c', `import os, runpy; os.chdir(${JSON.stringify(copy)}); runpy.run_path('to_parquet.py')`]);
    const same = py(`
import sys, pandas as pd
a = pd.read_parquet(sys.argv[1]); b = pd.read_parquet(sys.argv[2])
print(len(a) == len(b) and all(list(map(dict, a['prompt'][i])) == list(map(dict, b['prompt'][i])) for i in range(len(a))))
`, path.join(copy, 'wm_train.parquet'), path.join(bundle, 'data', 'wm_train.parquet'));
    expect(same.trim()).toBe('True');
  });

  it('the Hydra file loads with omegaconf, every key is a RAGEN key, and hydra composes it with the launch overrides', () => {
    const cfgFile = fs.readdirSync(path.join(bundle, 'config'))[0]!;
    const nested = JSON.parse(py(`
import json, sys
from omegaconf import OmegaConf
print(json.dumps(OmegaConf.to_container(OmegaConf.load(sys.argv[1]), resolve=False)))
`, path.join(bundle, 'config', cfgFile))) as Record<string, unknown>;
    expect(Object.keys(nested)).toContain('es_manager');
    expect(unknownRagenKeys(nested)).toEqual([]);
    // a typo is caught (the check can fail)
    expect(unknownRagenKeys({ ...nested, trainer: { total_train_steps: 5 } })).toEqual(['trainer.total_train_steps']);
    // hydra: compose over a stand-in base holding RAGEN's keys, with launch.sh's overrides (no "+": each must exist)
    const composed = py(`
import sys, os, yaml
from hydra import initialize_config_dir, compose
cfg_dir = sys.argv[1]
name = sys.argv[2][:-5]
with initialize_config_dir(config_dir=cfg_dir, version_base=None):
    c = compose(config_name=name, overrides=['model_path=/models/x', 'trainer.n_gpus_per_node=4', 'actor_rollout_ref.rollout.tensor_model_parallel_size=4',
        'trainer.default_local_dir=/out/ppo', 'trainer.experiment_name=e', "system.CUDA_VISIBLE_DEVICES='0,1,2,3'"])
    print(c.trainer.n_gpus_per_node, c.model_path, c.custom_envs.WorkbenchSokoban.env_type)
`, makeStandInBase(path.join(bundle, 'config', cfgFile)), cfgFile);
    expect(composed.trim()).toBe('4 /models/x workbench_sokoban');
    const launch = fs.readFileSync(path.join(bundle, 'launch.sh'), 'utf8');
    expect(launch).toContain('--nproc_per_node="$SFT_GPUS"');
    expect(launch).toContain(`model_path="'$MODEL_PATH'"`);   // bash-quoted and Hydra-quoted (issue 37 N5)
    expect(fs.readFileSync(path.join(bundle, 'model.txt'), 'utf8').trim()).toBe('Qwen/Qwen2.5-1.5B-Instruct');
    expect(JSON.parse(fs.readFileSync(path.join(bundle, 'stack.json'), 'utf8')).ragen.commit).toBe('5eb79b8');
  });

  it('the RAGEN env renders the same state text as the workbench template (several templates, both envs)', () => {
    const cases: [string, string][] = [['sokoban', 'spa'], ['sokoban', 'grid-coordinates'], ['sokoban', 'relations'], ['sokoban', 'json'], ['frozenlake', 'spa'], ['frozenlake', 'relations']];
    for (const [env, name] of cases) {
      const template = builtinTemplate(name);
      const cfg = hydraConfig({ ...JSON.parse(fs.readFileSync(path.join(run.runDir, 'run.json'), 'utf8')).config, env: { id: env, options: {} } }, template, 'x', 'm');
      const tag = env === 'sokoban' ? 'WorkbenchSokoban' : 'WorkbenchFrozenLake';
      const format = ((cfg.custom_envs as Record<string, { env_config: { state_format: string } }>)[tag]!).env_config.state_format;
      const expected: string[] = []; const grids: string[] = [];
      for (let seed = 0; seed < 8; seed++) {
        const p = previewPrompt(template, env, {}, seed);
        expected.push(p.stateText);
        grids.push(gridPart(env, p.stateText.includes('"grid"') ? JSON.parse(p.stateText).grid.join('\n') : p.stateText));
      }
      const got = JSON.parse(runPython([path.join(INTEROP_RESOURCES, 'workbench_env.py'), env, format], JSON.stringify(grids))) as string[];
      expect(got, `${env} × ${name}`).toEqual(expected);
    }
    // and on states after moves (the fixture run's turns)
    const states = run.episodes.flatMap((e) => e.turns.map((t) => t.stateAfter.text));
    const got = JSON.parse(runPython([path.join(INTEROP_RESOURCES, 'workbench_env.py'), 'sokoban', '{grid}\n{spa_coordinates}'], JSON.stringify(states.map((s) => gridPart('sokoban', s))))) as string[];
    expect(got).toEqual(states);
  });

  it('refuses to export into a non-empty folder, and a template the RAGEN env cannot render', () => {
    expect(() => exportSpaRagenBundle({ runDir: run.runDir, out: bundle })).toThrow(/not an empty folder/);
    const t = builtinTemplate('random-coordinates');
    expect(() => hydraConfig(JSON.parse(fs.readFileSync(path.join(run.runDir, 'run.json'), 'utf8')).config, t, 'x', 'm')).toThrow(/random_coordinates/);
  });
});

/** A stand-in for SPA's config/base.yaml: every RAGEN PPO key (from core/interop/ragen-keys.ts) set to null, so Hydra accepts exactly those overrides. */
function makeStandInBase(cfgFile: string): string {
  const dir = fs.mkdtempSync(path.join(tmp, 'hydra-'));
  const { RAGEN_PPO_KEYS } = require_keys();
  const root: Record<string, unknown> = { custom_envs: {} };
  for (const k of RAGEN_PPO_KEYS) {
    const parts = k.split('.');
    let o = root;
    parts.slice(0, -1).forEach((p) => { o = (o[p] ??= {}) as Record<string, unknown>; });
    o[parts[parts.length - 1]!] ??= null;
  }
  fs.writeFileSync(path.join(dir, 'base.yaml'), JSON.stringify(root));
  fs.copyFileSync(cfgFile, path.join(dir, path.basename(cfgFile)));
  return dir;
}
import * as keys from '../../core/interop/ragen-keys.js';
function require_keys() { return keys; }

describe('import (SPA/RAGEN → read-only run)', () => {
  it('the recorder (run by Python on a fixture history) → an imported run shown turn by turn', async () => {
    const src = path.join(tmp, 'ragen-out');
    runPython([RECORDER, 'from-json', path.join(FIXTURES, 'rollout-states.json'), '--out', path.join(src, 'workbench_rollouts', 'val_step10.jsonl'), '--step', '10']);
    fs.copyFileSync(path.join(FIXTURES, 'metrics.jsonl'), path.join(src, 'metrics.jsonl'));
    const r = await d.api.runs.import({ path: src, name: 'ragen fixture' });
    expect(r.run.status).toBe('imported');
    expect(r.sources.map((s) => s.kind).sort()).toEqual(['metrics', 'recorder']);
    const page = await d.api.rollouts.query({ runId: r.run.id });
    expect(page.total).toBe(2);
    const ep = await d.api.rollouts.get({ runId: r.run.id, id: page.episodes[0]!.id });
    expect(ep.seed).toBe(123);
    expect(ep.turns.map((t) => t.actionsExecuted)).toEqual([['Up'], ['Right', 'Right']]);
    expect(ep.turns[0]!.stateBefore.board.cells[3]![2]).toBe('player');
    expect(ep.turns[0]!.stateAfter.board.cells[1]![2]).toBe('box');
    expect(ep.turns[0]!.wm.prediction?.exact).toBe(true);
    expect(ep.turns[1]!.wm.prediction?.exact).toBe(false);   // the model predicted one step short
    expect(ep.turns.map((t) => t.reward)).toEqual([-0.1, -0.2]);
    const bad = await d.api.rollouts.get({ runId: r.run.id, id: page.episodes[1]!.id });
    expect(bad.turns[0]!.flags.invalidAction).toBe(true);
    const m = await d.api.metrics.query({ runIds: [r.run.id], names: ['actor/entropy'] });
    expect(m.series[0]!.y.length).toBe(3);
    await expect(d.api.runs.start({ runId: r.run.id })).rejects.toThrow(/imported/);
    await expect(d.api.runs.resume({ runId: r.run.id })).rejects.toThrow(/imported/);
  });

  it('stage-1 raw_trajectories, wm parquet, and W&B val/generations tables (JSON and CSV)', async () => {
    const src = path.join(tmp, 'stage1');
    fs.mkdirSync(src);
    for (const f of ['raw_trajectories_20250901_120000.json', 'val_generations.table.json', 'val_generations.csv']) fs.copyFileSync(path.join(FIXTURES, f), path.join(src, f));
    fs.copyFileSync(path.join(bundle, 'data', 'wm_train.parquet'), path.join(src, 'wm_train.parquet'));
    const r = await d.api.runs.import({ path: src });
    expect(Object.fromEntries(r.sources.map((s) => [s.kind + ':' + s.file, s.count]))).toEqual({
      'raw-trajectories:raw_trajectories_20250901_120000.json': 1, 'wandb-table:val_generations.table.json': 1, 'wandb-table:val_generations.csv': 1,
      'sft-parquet:wm_train.parquet': fs.readFileSync(path.join(bundle, 'data', 'wm_train.jsonl'), 'utf8').trim().split('\n').length,
    });
    const page = await d.api.rollouts.query({ runId: r.run.id });
    for (const s of page.episodes) {
      const ep = await d.api.rollouts.get({ runId: r.run.id, id: s.id });
      expect(ep.turns.length, s.id).toBe(2);
      expect(ep.turns[0]!.stateBefore.board.cells[3]![2]).toBe('player');
      expect(ep.turns[1]!.stateBefore.board.cells[2]![2]).toBe('player');
      expect(ep.turns[1]!.parsed.actions).toEqual(['Right', 'Right']);
      expect(ep.turns[0]!.reward).toBe(-0.1);
    }
    const rows = await d.api.datasets.query({ runId: r.run.id, split: 'train' });
    expect(rows.total).toBeGreaterThan(0);
    expect(rows.rows[0]!.prompt).toContain('Turn');
  });

  it('malformed input: the error names file, line and field, and nothing is left behind', async () => {
    const src = path.join(tmp, 'bad');
    fs.mkdirSync(src);
    const good = fs.readFileSync(path.join(tmp, 'ragen-out', 'workbench_rollouts', 'val_step10.jsonl'), 'utf8').trim().split('\n');
    const broken = JSON.parse(good[1]!);
    delete broken.history[0].reward;
    fs.writeFileSync(path.join(src, 'val_step10.jsonl'), `${good[0]}\n${JSON.stringify(broken)}\n`);
    const before = fs.readdirSync(path.join(tmp, 'project', 'runs')).sort();
    await expect(d.api.runs.import({ path: src })).rejects.toThrow('val_step10.jsonl:2 history[0].reward: expected a number');
    fs.writeFileSync(path.join(src, 'val_step10.jsonl'), `${good[0]}\n{"format": "spa-workbench.ragen-recorder", oops\n`);
    await expect(d.api.runs.import({ path: src })).rejects.toThrow(/val_step10\.jsonl:2: not valid JSON/);
    fs.writeFileSync(path.join(src, 'val_step10.jsonl'), `${JSON.stringify({ ...JSON.parse(good[0]!), env_type: 'webshop', tag: 'WebShop' })}\n`);
    await expect(d.api.runs.import({ path: src })).rejects.toThrow('val_step10.jsonl:1 env_type');
    expect(fs.readdirSync(path.join(tmp, 'project', 'runs')).sort()).toEqual(before);
    expect(fs.readdirSync(path.join(tmp, 'project')).filter((f) => f.startsWith('.import-'))).toEqual([]);
    expect(() => parseCsv('step,output_1\n1,"open', 'x.csv')).toThrow('x.csv:2: a quoted field is not closed');
    fs.rmSync(src, { recursive: true });
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, 'notes.txt'), 'hello');
    await expect(d.api.runs.import({ path: src })).rejects.toThrow(/nothing importable/);
  });

  it('round trip: a workbench run exported, its episodes in the recorder format, imported again, equal turn by turn', async () => {
    const states = run.episodes.map((e, i) => toRagenCache(e, i));
    const statesFile = path.join(tmp, 'roundtrip-states.json');
    fs.writeFileSync(statesFile, JSON.stringify(states));
    const src = path.join(tmp, 'roundtrip');
    runPython([path.join(bundle, 'ragen_recorder.py'), 'from-json', statesFile, '--out', path.join(src, 'val_step0.jsonl'), '--step', '0']);
    const r = await d.api.runs.import({ path: src });
    const page = await d.api.rollouts.query({ runId: r.run.id, limit: 100 });
    expect(page.total).toBe(run.episodes.length);
    for (const [i, original] of run.episodes.entries()) {
      const ep = await d.api.rollouts.get({ runId: r.run.id, id: `val-000000-e${i}` });
      expect(ep.seed).toBe(original.seed);
      expect(ep.success).toBe(original.success);
      expect(ep.turns.length).toBe(original.turns.length);
      ep.turns.forEach((t, k) => {
        const o = original.turns[k]!;
        expect(t.response).toBe(o.response);
        expect(t.stateBefore).toEqual(o.stateBefore);
        expect(t.stateAfter).toEqual(o.stateAfter);
        expect(t.actionsExecuted).toEqual(o.actionsExecuted);
        expect(t.reward).toBe(o.reward);
        expect(t.parsed.observation).toBe(o.parsed.observation);
        expect(t.parsed.prediction).toBe(o.parsed.prediction);
        expect(t.observedBoard).toEqual(o.observedBoard);
        expect(t.predictedBoard).toEqual(o.predictedBoard);
        expect(t.flags).toEqual(o.flags);
      });
    }
  });

  it('the recorder patch adds the validation hook once', () => {
    const ragen = path.join(tmp, 'fake-ragen');
    fs.mkdirSync(path.join(ragen, 'ragen', 'trainer'), { recursive: true });
    const file = path.join(ragen, 'ragen', 'trainer', 'agent_trainer.py');
    fs.writeFileSync(file, 'class T:\n    def _validate(self):\n        test_batch = self.agent_proxy.rollout(test_gen_batch, val=True)\n        return test_batch\n');
    expect(runPython([RECORDER, 'patch', ragen])).toContain('hook added at line 4');
    expect(runPython([RECORDER, 'patch', ragen])).toContain('already present');
    expect(fs.readFileSync(file, 'utf8').split('\n')[3]).toBe('        import ragen_recorder; ragen_recorder.record_validation(self.agent_proxy.val_es_manager, self.global_steps)');
  });
});

// Upstream checks of ../shared/reference/interop-check.md (M1, M2, M4, M7) against SPA @3848e68 / RAGEN @5eb79b8.
describe('upstream fidelity fixes (issue 21)', () => {
  const launch = () => fs.readFileSync(path.join(bundle, 'launch.sh'), 'utf8');
  const bash = (script: string, env: Record<string, string>) => {
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: { ...process.env, ...env } });
    if (r.status !== 0) throw new Error(`bash failed (${r.status}): ${r.stderr}`);
    return r.stdout.trim();
  };

  it('M1: launch.sh always passes +algorithm.bi_level_gae and +rollout.tp_size_check (RAGEN train.py:138,142; SPA train_ppo_sfted.sh:61-62)', () => {
    const text = launch();
    expect(text).toMatch(/\+algorithm\.bi_level_gae=(True|False) \\/);
    expect(text).toContain('+actor_rollout_ref.rollout.tp_size_check="$TP_CHECK"');
    const tpLine = text.split('\n').find((l) => l.startsWith('TP_CHECK='))!;
    expect(bash(`${tpLine}\necho $TP_CHECK`, { TP: '4', GPUS: '8' })).toBe('False');
    expect(bash(`${tpLine}\necho $TP_CHECK`, { TP: '8', GPUS: '8' })).toBe('True');
  });

  it('M4: the SFT checkpoint pick is numeric even when the output path has "_" in it (SPA run_spa.sh:111 uses sort -V)', () => {
    // the pick: the step folders globbed (nullglob), then LAST=$(… | sort -V | tail -1) (issue 37 N5: no `ls` under pipefail)
    const lines = launch().split('\n').map((l) => l.trim());
    const line = lines.slice(lines.findIndex((l) => l.startsWith('shopt -s nullglob;')), lines.findIndex((l) => l.startsWith('LAST=$(')) + 1).join('\n');
    const out = path.join(tmp, 'my_bundle_out');
    for (const s of [5, 10, 9]) fs.mkdirSync(path.join(out, 'sft', `global_step_${s}`), { recursive: true });
    expect(bash(`${line}\necho "$LAST"`, { OUT: out })).toBe(path.join(out, 'sft', 'global_step_10'));
  });

  it('M2: WorkbenchFrozenLakeEnv renders when RAGEN calls render() on a parent whose render(self) takes no mode', () => {
    // Stand-ins with RAGEN 5eb79b8's signatures: frozen_lake/env.py:47 `def render(self)`, sokoban/env.py:53 `def render(self, mode=None)`.
    const out = py(`
import sys, types, json, dataclasses
sys.path.insert(0, sys.argv[1])
def mod(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m
@dataclasses.dataclass
class Cfg: render_mode: str = 'text'
class FrozenLakeEnv:
    def __init__(self, config): self.config = config; self.render_mode = 'text'; self.P = {}
    def render(self): return '_P_\\n_G_'
class SokobanEnv:
    def __init__(self, config): self.config = config; self.render_mode = 'text'
    def render(self, mode=None): return '#P#'
for n in ('ragen', 'ragen.env', 'ragen.env.sokoban', 'ragen.env.frozen_lake'): mod(n)
mod('ragen.env.sokoban.config', SokobanEnvConfig=Cfg); mod('ragen.env.sokoban.env', SokobanEnv=SokobanEnv)
mod('ragen.env.frozen_lake.config', FrozenLakeEnvConfig=Cfg); mod('ragen.env.frozen_lake.env', FrozenLakeEnv=FrozenLakeEnv)
import workbench_env
envs, cfgs = {}, {}
workbench_env.register(envs, cfgs)
lake = envs['workbench_frozen_lake'](cfgs['workbench_frozen_lake'](state_format='{grid}|{rows}x{cols}'))
box = envs['workbench_sokoban'](cfgs['workbench_sokoban'](state_format='{grid}|{rows}x{cols}'))
print(json.dumps([lake.render(), box.render(), box.render('text')]))
`, INTEROP_RESOURCES);
    expect(JSON.parse(out)).toEqual(['_P_\n_G_|2x3', '#P#|1x3', '#P#|1x3']);
  });

  it('M7: recorder lines with RAGEN action ids (es_manager.py:153,257-267) import as names; an unknown id is refused by field', () => {
    const file = path.join(tmp, 'ids', 'val_step0.jsonl');
    runPython([RECORDER, 'from-json', path.join(FIXTURES, 'rollout-states.json'), '--out', file, '--step', '0']);
    const ids: Record<string, number> = { Up: 1, Down: 2, Left: 3, Right: 4 };   // ragen/env/sokoban/config.py action_lookup
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { history: { actions?: unknown[] }[] });
    for (const l of lines) for (const h of l.history) if (h.actions) h.actions = h.actions.map((a) => ids[a as string]);
    const ep = episodeFromRecorderLine(lines[0], 'val_step0.jsonl', 1, 'r', 0, 0);
    expect(ep.turns.map((t) => t.actionsExecuted)).toEqual([['Up'], ['Right', 'Right']]);
    const bad = structuredClone(lines[0]!);
    bad.history[1]!.actions = [9];
    expect(() => episodeFromRecorderLine(bad, 'val_step0.jsonl', 1, 'r', 0, 0)).toThrow(/val_step0\.jsonl:1 history\[1\]\.actions\[0\]: expected a RAGEN sokoban action id/);
    // FrozenLake ids differ: frozen_lake/config.py:22 maps 1-4 to Left, Down, Right, Up.
    expect(RAGEN_ACTION_IDS.frozenlake[4]).toBe('Up');
  });
});
