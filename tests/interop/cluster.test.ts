// Issue 21: what a cluster user hits running the bundle on SPA @3848e68 / RAGEN @5eb79b8 / verl @1e47e412
// (../shared/reference/interop-check.md M1-M12). Each test names the upstream file it reproduces.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exportSpaRagenBundle, INTEROP_RESOURCES } from '../../core/interop/export-bundle.js';
import { importRagenRun } from '../../core/interop/import-run.js';
import { makeWorkbenchRun, ppoOverrides, pythonHas, runPython, type FixtureRun } from './workbench-run.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const RAGEN_STUB = fileURLToPath(new URL('../fixtures/interop-ragen-stub/', import.meta.url));
let tmp: string;
let run: FixtureRun;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-cluster-'));
  run = await makeWorkbenchRun(path.join(tmp, 'project'), { games: 4 });
}, 120_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function exportWith(edit: (cfg: Record<string, any>) => void, name: string): string {
  const dir = path.join(tmp, `run-${name}`);
  fs.cpSync(run.runDir, dir, { recursive: true });
  const rec = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
  edit(rec.config);
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(rec));
  const out = path.join(tmp, `my_bundle_${name}`);
  exportSpaRagenBundle({ runDir: dir, out });
  return out;
}


// RAGEN 5eb79b8 train.py:127-150 (add_dependency_and_validate_config) and ragen/trainer/agent_trainer.py:636 run unchanged on the
// bundle config composed by Hydra over SPA 3848e68's own config/ (tests/fixtures/interop/ragen_train_checks.py; spa-config.test.ts
// has the rest). SPA's config has neither bi_level_gae nor tp_size_check (SPA train_ppo_sfted.sh:61-62 adds them with '+').
const SPA_CONFIG = fileURLToPath(new URL('../fixtures/interop/spa-config-3848e68/', import.meta.url));
const CHECKS_PY = fileURLToPath(new URL('../fixtures/interop/ragen_train_checks.py', import.meta.url));

function checkRagen(bundle: string, overrides: string[]): string {
  const config = path.join(bundle, 'config', fs.readdirSync(path.join(bundle, 'config'))[0]!);
  const r = JSON.parse(runPython([CHECKS_PY, SPA_CONFIG, config, JSON.stringify(overrides)])) as { ok: boolean; error?: string; bi_level_gae?: boolean };
  if (!r.ok) throw new Error(r.error);
  return `ok ${r.bi_level_gae ? 'True' : 'False'}`;
}

describe('launch.sh against RAGEN train.py checks (M1, M11, M12 paths)', () => {
  it('PPO overrides pass RAGEN 5eb79b8 train.py:127-150 on SPA 3848e68 config/ with TP < GPUs and TP = GPUs; GRPO passes agent_trainer.py:636', () => {
    const bundle = exportWith(() => {}, 'gae');
    const launch = fs.readFileSync(path.join(bundle, 'launch.sh'), 'utf8');
    const vars = (gpus: number, tp: number) => ({ GPUS: String(gpus), TP: String(tp), TP_CHECK: gpus === tp ? 'True' : 'False', OUT: '/o',
      MODEL_PATH: 'Qwen/Qwen2.5-1.5B-Instruct', CUDA_VISIBLE_DEVICES: Array.from({ length: gpus }, (_, i) => i).join(','), EXPERIMENT: 'x' });
    const mini = Number(/^ppo_mini_batch_size: (\d+)/m.exec(fs.readFileSync(path.join(bundle, 'config', fs.readdirSync(path.join(bundle, 'config'))[0]!),
      'utf8'))![1]);
    const [g1, g2] = mini % 4 === 0 ? [4, 2] : [mini, 1];   // launch.sh refuses a mini-batch that --gpus does not divide (spa-config.test.ts)
    expect(checkRagen(bundle, ppoOverrides(launch, vars(g1, g2)))).toBe('ok False');
    expect(checkRagen(bundle, ppoOverrides(launch, vars(g1, g1)))).toBe('ok False');
    // without the '+' extras the same check fails, as on the cluster
    expect(() => checkRagen(bundle, ppoOverrides(launch, vars(g1, g1)).filter((o) => !o.startsWith('+')))).toThrow(/bi_level_gae|tp_size_check/);
    // paths are quoted for bash and for Hydra ("'$VAR…'", issue 37 N5), so a space or '=' in $OUT stays one override value
    expect(launch).toContain(`hydra.run.dir="'$OUT/hydra'"`);
    expect(launch).toContain('export WANDB_DIR="$OUT"');
    expect(launch).toContain(`trainer.validation_data_dir="'$OUT/val_generations'"`);
    const grpo = exportWith((c) => { c.stages.rl = { ...(c.stages.rl ?? {}), algorithm: 'grpo' }; }, 'grpo');
    const g = fs.readFileSync(path.join(grpo, 'launch.sh'), 'utf8');
    expect(fs.readFileSync(path.join(grpo, 'config', fs.readdirSync(path.join(grpo, 'config'))[0]!), 'utf8')).toContain('adv_estimator: grpo');
    expect(checkRagen(grpo, ppoOverrides(g, vars(1, 1)))).toBe('ok False');
    expect(() => checkRagen(grpo, ppoOverrides(g, vars(1, 1)).filter((o) => !o.includes('grpo_')))).toThrow(/grpo_advantage/);
  });

  it('M4: the SFT checkpoint pick takes the highest step even with "_" in the bundle path (run_spa.sh:111 sort -V)', () => {
    const launch = fs.readFileSync(path.join(tmp, 'my_bundle_gae', 'launch.sh'), 'utf8');
    // the pick is the nullglob of the step folders through LAST=$(… | sort -V | tail -1) (issue 37 N5: no `ls` under pipefail)
    const lines = launch.split('\n').map((l) => l.trim());
    const line = lines.slice(lines.findIndex((l) => l.startsWith('shopt -s nullglob;')), lines.findIndex((l) => l.startsWith('LAST=$(')) + 1).join('\n');
    const out = path.join(tmp, 'my_bundle_out_x');
    for (const s of [5, 10, 9]) fs.mkdirSync(path.join(out, 'sft', `global_step_${s}`), { recursive: true });
    const got = execFileSync('bash', ['-c', `OUT=${JSON.stringify(out)}\n${line}\necho "$LAST"`], { encoding: 'utf8' }).trim();
    expect(path.basename(got)).toBe('global_step_10');
  });

  it('M6/M10: the bundle README has SPA\'s setup step and describes the placeholder tokens', () => {
    const readme = fs.readFileSync(path.join(tmp, 'my_bundle_gae', 'README.md'), 'utf8');
    expect(readme).toContain('bash scripts/setup_ragen.sh');
    expect(readme.indexOf('setup_ragen.sh')).toBeLessThan(readme.indexOf('pip install torch==2.6.0'));
    expect(readme).toContain('placeholder token');
    expect(readme).not.toMatch(/masks the <observation>\/<prediction> contents out of the loss/);
  });
});

const HAS_GYM = pythonHas(['gymnasium']);
if (!HAS_GYM) console.error('\n*** tests/interop/cluster.test.ts: gymnasium is NOT installed for python3 (.ci/install-interop.sh installs it); ' +
  'the RAGEN env tests are SKIPPED ***\n');

describe.skipIf(!HAS_GYM)('workbench_env.py on RAGEN 5eb79b8\'s own FrozenLake env (tests/fixtures/interop-ragen-stub, copied unchanged) over gymnasium (M2, M3)', () => {
  it('FrozenLake resets, renders and steps; a slippery move goes the intended way with the run\'s success rate (fixed seed)', () => {
    const bundle = exportWith((c) => { c.env = { id: 'frozenlake', options: { successRate: 0.8 } }; }, 'fl');
    const cfgText = fs.readFileSync(path.join(bundle, 'config', fs.readdirSync(path.join(bundle, 'config'))[0]!), 'utf8');
    expect(cfgText).toContain('success_rate: 0.8');
    const out = runPython(['-c', `
import sys, json, yaml, importlib.util, numpy as np
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location('workbench_env', sys.argv[2]); wb = importlib.util.module_from_spec(spec); spec.loader.exec_module(wb)
envs, cfgs = {}, {}
wb.register(envs, cfgs)
c = yaml.safe_load(open(sys.argv[3]))['custom_envs']['WorkbenchFrozenLake']
env = envs[c['env_type']](cfgs[c['env_type']](**c['env_config']))   # es_manager.py:70-74
first = env.reset(seed=7)                                          # es_manager.py:108 -> render() (M2)
s2 = env.step(3)[0]
# statistics: from an interior frozen cell, action Right (gym 2) many times
env.reset(seed=7)
n = env.ncol; hits = 0; N = 4000; rng = np.random.default_rng(0)
cell = next(s for s in range(env.observation_space.n) if 0 < s // n < n - 1 and 0 < s % n < n - 1 and len(env.P[s][2]) == 3)
intended = env.P[cell][2][1][1]
env.np_random = np.random.default_rng(0)
for _ in range(N):
    env.s = cell
    env.step(3)
    hits += int(env.s == intended)
print(json.dumps({'first': first, 'after': s2, 'rate': hits / N}))
`, RAGEN_STUB, path.join(INTEROP_RESOURCES, 'workbench_env.py'), path.join(bundle, 'config', fs.readdirSync(path.join(bundle, 'config'))[0]!)]);
    const r = JSON.parse(out) as { first: string; after: string; rate: number };
    expect(r.first).toMatch(/Player \(P\) is at \(\d+,\d+\)/);
    expect(typeof r.after).toBe('string');
    expect(Math.abs(r.rate - 0.8)).toBeLessThan(0.03);   // gymnasium alone: 1/3
  });
});

describe('import of what the cluster writes (M7, M8, M9, M12)', () => {
  it('recorder file with integer action ids, verl <step>.jsonl dump, ppo.log console metrics, .hydra config of SPA → an spa run', async () => {
    const src = path.join(tmp, 'outputs');
    const states = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'rollout-states.json'), 'utf8')) as { history: { actions?: unknown[] }[] }[];
    const ids: Record<string, number> = { Up: 1, Down: 2, Left: 3, Right: 4 };   // ragen/env/sokoban/config.py action_lookup
    for (const s of states) for (const h of s.history) if (h.actions) h.actions = h.actions.map((a) => ids[String(a)] ?? a);
    fs.writeFileSync(path.join(tmp, 'int-states.json'), JSON.stringify(states));
    runPython([path.join(INTEROP_RESOURCES, 'ragen_recorder.py'), 'from-json', path.join(tmp, 'int-states.json'), '--out',
      path.join(src, 'workbench_rollouts', 'val_step0.jsonl'), '--step', '0']);
    const table = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'val_generations.table.json'), 'utf8')) as { columns: string[]; data: unknown[][] };
    const chat = String(table.data[0]![table.columns.indexOf('output_1')]);   // RAGEN's decoded chat (agent_trainer.py:251)
    fs.mkdirSync(path.join(src, 'val_generations'), { recursive: true });
    fs.writeFileSync(path.join(src, 'val_generations', '10.jsonl'), [JSON.stringify({ input: '', output: chat, score: 0, step: 10, reward: 0 }),
      JSON.stringify({ input: '', output: chat, score: 1, step: 10, reward: 1 })].join('\n') + '\n');
    fs.writeFileSync(path.join(src, 'ppo.log'), '(TaskRunner pid=1) step:1 - actor/entropy:0.912 - val-env/success:0.125\nnoise\n' +
      '(TaskRunner pid=1) step:2 - actor/entropy:0.850 - val-env/success:0.250\n');
    fs.mkdirSync(path.join(src, 'hydra', '.hydra'), { recursive: true });
    fs.writeFileSync(path.join(src, 'hydra', '.hydra', 'config.yaml'),
      'ctx_manager:\n  mode: ${oc.env:MODE}\nmodel_path: m\ntrainer:\n  total_training_steps: 2\nes_manager:\n  train:\n    env_configs:\n      tags: [SimpleSokoban]\ncustom_envs:\n  SimpleSokoban:\n    env_type: sokoban\n');
    const r = await importRagenRun({ source: src, projectDir: path.join(tmp, 'project'), now: 1 });
    const kinds = Object.fromEntries(r.sources.map((s) => [s.kind, s.count]));
    expect(kinds).toMatchObject({ recorder: 2, 'verl-val-dump': 2, 'console-metrics': 2, config: 1 });
    expect(r.record.method).toBe('spa');
    expect(r.record.latest['actor/entropy']).toBe(0.85);
    expect(r.warnings.join('\n')).toMatch(/rounded to 3 decimals/);
    const eps = fs.readFileSync(path.join(tmp, 'project', 'runs', r.runId, 'rollouts', 'imported.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const rec = eps.find((e) => e.id.startsWith('val-'))!;
    expect(rec.turns[0].actionsExecuted).toEqual(['Up']);
    expect(eps.filter((e) => e.id.startsWith('valdump-')).length).toBe(2);
  });

  it('a malformed console metrics line names file, line and key', async () => {
    const src = path.join(tmp, 'badlog');
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, 'ppo.log'), 'step:1 - actor/entropy:0.9\nstep:2 - actor/entropy:abc\n');
    await expect(importRagenRun({ source: src, projectDir: path.join(tmp, 'project') })).rejects.toThrow(/ppo\.log:2 actor\/entropy/);
  });
});
