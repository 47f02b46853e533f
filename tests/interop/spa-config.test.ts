// Issue 21: the exported config composed by Hydra over SPA's own config/ (a copy of SPA @3848e68 config/base.yaml,
// ppo_trainer.yaml, envs.yaml, _3_frozen_lake.yaml, _2_sokoban.yaml in tests/fixtures/interop/spa-config-3848e68/) with the
// overrides launch.sh passes, then the checks RAGEN makes before training, copied from RAGEN @5eb79b8 into
// tests/fixtures/interop/ragen_train_checks.py: train.py:127-150 (add_dependency_and_validate_config), ragen/utils.py:20-26
// (resolvers), ragen/llm_agent/es_manager.py:58-59, ragen/trainer/agent_trainer.py:164 and :636.
// Also `--values paper` (the release's settings) against the release's own composed _3_frozen_lake, and launch.sh's
// checks before anything starts (GPU ids under SLURM, tensor parallel against the model's heads, SFT GPUs against val rows).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exportSpaRagenBundle, type ExportOptions } from '../../core/interop/export-bundle.js';
import { exportTo } from '../../core/cli/interop-commands.js';
import { RAGEN_PPO_KEYS } from '../../core/interop/ragen-keys.js';
import { makeWorkbenchRun, ppoOverrides, pythonHas, runPython, type FixtureRun } from './workbench-run.js';

const SPA_CONFIG = fileURLToPath(new URL('../fixtures/interop/spa-config-3848e68/', import.meta.url));
const CHECKS_PY = fileURLToPath(new URL('../fixtures/interop/ragen_train_checks.py', import.meta.url));
const HAS_HYDRA = pythonHas(['hydra', 'omegaconf']);
if (!HAS_HYDRA) console.error('\n*** tests/interop/spa-config.test.ts: hydra-core is NOT installed for python3; the composition tests are SKIPPED ***\n');

let tmp: string;
let run: FixtureRun;
beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-config-'));
  run = await makeWorkbenchRun(path.join(tmp, 'project'), { env: 'frozenlake', games: 6 });
}, 120_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Checked = { ok: boolean; error?: string; [k: string]: unknown };

function exportRun(name: string, opts: Partial<ExportOptions> = {}, edit?: (cfg: Record<string, any>) => void): string {
  const dir = path.join(tmp, `run-${name}`);
  fs.cpSync(run.runDir, dir, { recursive: true });
  if (edit) {
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
    edit(rec.config);
    fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(rec));
  }
  const out = path.join(tmp, `bundle_${name}`);
  exportSpaRagenBundle({ runDir: dir, out, ...opts });
  return out;
}
const configOf = (bundle: string) => path.join(bundle, 'config', fs.readdirSync(path.join(bundle, 'config'))[0]!);

function compose(configFile: string, overrides: string[]): Checked {
  return JSON.parse(runPython([CHECKS_PY, SPA_CONFIG, configFile, JSON.stringify(overrides)])) as Checked;
}
function launchVars(gpus: number, tp: number) {
  return { GPUS: String(gpus), TP: String(tp), TP_CHECK: tp === gpus ? 'True' : 'False', OUT: '/o', MODEL_PATH: 'Qwen/Qwen2.5-1.5B-Instruct',
    CUDA_VISIBLE_DEVICES: Array.from({ length: gpus }, (_, i) => i).join(','), EXPERIMENT: 'x' };
}
/** Run the bundle's launch.sh --check with the given arguments and environment. */
function launchCheck(bundle: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync('bash', [path.join(bundle, 'launch.sh'), '--check', ...args], { encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), ...env } });
  return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
}

// The release's _3_frozen_lake as SPA's train_ppo_sfted.sh:50-62 starts it (4 GPUs, TP 4, 1000 steps, save every 100).
const RELEASE_OVERRIDES = ['model_path=/ckpt/sft', "system.CUDA_VISIBLE_DEVICES='0,1,2,3'", 'trainer.n_gpus_per_node=4',
  'trainer.total_training_steps=1000', 'trainer.experiment_name=x', 'trainer.save_freq=100', 'trainer.default_local_dir=/o',
  'actor_rollout_ref.rollout.tensor_model_parallel_size=4', '+actor_rollout_ref.rollout.tp_size_check=True', '+algorithm.bi_level_gae=False'];

describe.skipIf(!HAS_HYDRA)('the bundle config composed on SPA 3848e68 config/ and RAGEN 5eb79b8 pre-training checks', () => {
  it('core/interop/ragen-keys.ts holds exactly the leaf keys of SPA\'s composed base (base.yaml over ppo_trainer.yaml, custom_envs aside)', () => {
    const keys = JSON.parse(runPython(['-c', `
import json, os, sys
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
os.environ['MODE'] = 'base'
with initialize_config_dir(config_dir=sys.argv[1], version_base=None):
    c = OmegaConf.to_container(compose(config_name='base'), resolve=False)
def leaves(o, p=''):
    if isinstance(o, dict) and o:
        for k, v in o.items():
            yield from leaves(v, f'{p}.{k}' if p else str(k))
    else:
        yield p
print(json.dumps(sorted(k for k in leaves(c) if not k.startswith('custom_envs'))))
`, path.resolve(SPA_CONFIG)])) as string[];
    expect(keys.length).toBeGreaterThan(200);
    expect([...RAGEN_PPO_KEYS].sort()).toEqual(keys);
  });

  it('control: the release\'s own _3_frozen_lake passes with train_ppo_sfted.sh\'s overrides, and fails without its two "+" extras', () => {
    const release = compose(path.join(SPA_CONFIG, '_3_frozen_lake.yaml'), RELEASE_OVERRIDES);
    expect(release).toMatchObject({ ok: true, train_batch_size: 256, tag: 'FrozenLake', env_type: 'frozen_lake' });
    const bare = compose(path.join(SPA_CONFIG, '_3_frozen_lake.yaml'), RELEASE_OVERRIDES.filter((o) => !o.startsWith('+')));
    expect(bare.ok).toBe(false);
    expect(bare.error).toMatch(/ConfigAttributeError.*(tp_size_check|bi_level_gae)/);
  });

  it('a FrozenLake bundle (run values) passes with launch.sh\'s PPO overrides for --gpus 1, 2 (TP 2) and 8 with TP 4; without the extras it fails (M1)', () => {
    const bundle = exportRun('run-values', {}, (c) => { c.env = { id: 'frozenlake', options: { successRate: 0.8 } }; });
    const launch = fs.readFileSync(path.join(bundle, 'launch.sh'), 'utf8');
    for (const [gpus, tp] of [[1, 1], [2, 2], [8, 4]] as const) {
      const miniBatch = Number(/^ppo_mini_batch_size: (\d+)/m.exec(fs.readFileSync(configOf(bundle), 'utf8'))![1]);
      if (miniBatch % gpus !== 0) continue;   // launch.sh refuses these itself (tested below)
      const r = compose(configOf(bundle), ppoOverrides(launch, launchVars(gpus, tp)));
      expect(r, `--gpus ${gpus} --tp ${tp}: ${r.error}`).toMatchObject({ ok: true, env_type: 'workbench_frozen_lake', mode: 'base',
        tp_size_check: tp === gpus });
    }
    const bare = compose(configOf(bundle), ppoOverrides(launch, launchVars(1, 1)).filter((o) => !o.startsWith('+')));
    expect(bare.error).toMatch(/ConfigAttributeError.*(tp_size_check|bi_level_gae)/);
    const readme = fs.readFileSync(path.join(bundle, 'README.md'), 'utf8');
    expect(readme).toContain('This bundle trains with the run\'s own settings (the default)');
    expect(JSON.parse(fs.readFileSync(path.join(bundle, 'bundle.json'), 'utf8')).values).toBe('run');
  });

  it('--values paper: the release\'s numbers (equal to the composed _3_frozen_lake), the run\'s template and env; passes the checks', () => {
    const release = compose(path.join(SPA_CONFIG, '_3_frozen_lake.yaml'), RELEASE_OVERRIDES);
    const bundle = exportRun('paper', { values: 'paper' }, (c) => { c.env = { id: 'frozenlake', options: { successRate: 0.8 } }; });
    const launch = fs.readFileSync(path.join(bundle, 'launch.sh'), 'utf8');
    const paper = compose(configOf(bundle), ppoOverrides(launch, launchVars(4, 4)));
    expect(paper.ok, String(paper.error)).toBe(true);
    for (const key of ['train_groups', 'val_groups', 'total_training_steps', 'ppo_mini_batch_size', 'lr', 'critic_lr', 'response_length', 'max_turn',
      'rollout_filter_ratio', 'seed', 'test_freq', 'save_freq', 'max_actions_per_traj', 'train_batch_size', 'bi_level_gae']) {
      expect(paper[key], key).toEqual(release[key]);
    }
    expect(paper).toMatchObject({ train_groups: [32, 8], val_groups: [128, 8], total_training_steps: 1000, ppo_mini_batch_size: 64, lr: 1e-6,
      response_length: 400, max_turn: 5, rollout_filter_ratio: 0.25, seed: [10000, 123] });
    // the run's env and template stay
    const yaml = fs.readFileSync(configOf(bundle), 'utf8');
    expect(paper).toMatchObject({ env_type: 'workbench_frozen_lake', tag: 'WorkbenchFrozenLake' });
    expect(yaml).toContain('success_rate: 0.8');
    const runYaml = fs.readFileSync(configOf(path.join(tmp, 'bundle_run-values')), 'utf8');
    const stateFormat = (y: string) => /state_format: (.*)/.exec(y)![1];
    expect(stateFormat(yaml)).toBe(stateFormat(runYaml));
    expect(/env_instruction: (.*)/.exec(yaml)![1]).toBe(/env_instruction: (.*)/.exec(runYaml)![1]);
    // SFT as sft/finetune_ft.sh:44-63
    expect(launch).toContain('optim.lr=0.0001');
    expect(launch).toContain('trainer.total_epochs=5');
    expect(launch).toContain('data.train_batch_size=16');
    const readme = fs.readFileSync(path.join(bundle, 'README.md'), 'utf8');
    expect(readme).toContain('This bundle trains with the SPA release\'s settings (`--values paper`)');
    expect(JSON.parse(fs.readFileSync(path.join(bundle, 'bundle.json'), 'utf8')).values).toBe('paper');
  });

  it('train.py:140 (groups x size x filter ratio >= mini-batch): a larger run mini-batch is capped and said so; the capped config passes', () => {
    const bundle = exportRun('small-groups', {}, (c) => { c.stages.rl = { ...(c.stages.rl ?? {}), groups: 1, groupSize: 2, miniBatchSize: 8 }; });
    expect(fs.readFileSync(configOf(bundle), 'utf8')).toMatch(/^ppo_mini_batch_size: 2$/m);
    expect(fs.readFileSync(path.join(bundle, 'README.md'), 'utf8')).toContain('the run\'s 8 is more than the 2 rollouts each step keeps');
    const launch = fs.readFileSync(path.join(bundle, 'launch.sh'), 'utf8');
    expect(compose(configOf(bundle), ppoOverrides(launch, launchVars(1, 1)))).toMatchObject({ ok: true, ppo_mini_batch_size: 2 });
    expect(compose(configOf(bundle), ppoOverrides(launch, launchVars(1, 1)).concat(['ppo_mini_batch_size=8'])).error)
      .toMatch(/must be greater than or equal to ppo_mini_batch_size \(8\)/);   // train.py:140 itself, on the uncapped value
    expect(() => exportRun('no-rollouts', {}, (c) => { c.stages.rl = { ...(c.stages.rl ?? {}), groups: 1, groupSize: 1, keepGroupsFraction: 0.5 }; }))
      .toThrow(/leaves no rollout to train on/);
  });
});

describe('export --values', () => {
  it('an unknown value is refused naming the flag and the choices, before anything is written', () => {
    const project = path.join(tmp, 'project');
    const out = path.join(tmp, 'bundle_bad-values');
    expect(() => exportTo('spa-ragen', project, run.runId, out, undefined, 'papr')).toThrow(/--values: expected run \| paper .*received "papr"/);
    expect(() => exportSpaRagenBundle({ runDir: run.runDir, out, values: 'papr' as never })).toThrow(/--values must be run or paper/);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('launch.sh checks before anything starts', () => {
  it('tensor parallel must divide the model\'s attention heads (Qwen2.5-1.5B: 12); the default TP is a divisor of both', () => {
    const bundle = exportRun('paper-launch', { values: 'paper' });
    const bad = launchCheck(bundle, ['--gpus', '8', '--tp', '8', '--skip-sft']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--tp 8 does not divide the model\'s 12 attention heads');
    const auto = launchCheck(bundle, ['--gpus', '8', '--skip-sft']);
    expect(auto.out).toContain('TP=4 TP_CHECK=False HEADS=12');
    expect(launchCheck(bundle, ['--gpus', '4', '--skip-sft']).out).toContain('TP=4 TP_CHECK=True');
    // a local model folder: its own config.json
    const model = path.join(tmp, 'model9');
    fs.mkdirSync(model);
    fs.writeFileSync(path.join(model, 'config.json'), JSON.stringify({ num_attention_heads: 9 }));
    const nine = launchCheck(bundle, ['--gpus', '4', '--tp', '2', '--model', model, '--skip-sft']);
    expect(nine.err).toContain('--tp 2 does not divide the model\'s 9 attention heads');
  });

  it('SLURM\'s CUDA_VISIBLE_DEVICES: fewer ids than --gpus is refused naming both; more are cut to the first --gpus', () => {
    const bundle = path.join(tmp, 'bundle_paper-launch');
    const few = launchCheck(bundle, ['--gpus', '4', '--skip-sft'], { CUDA_VISIBLE_DEVICES: '3,5' });
    expect(few.code).toBe(2);
    expect(few.err).toContain('--gpus 4 but CUDA_VISIBLE_DEVICES=3,5 lists 2 device(s)');
    const many = launchCheck(bundle, ['--gpus', '2', '--skip-sft'], { CUDA_VISIBLE_DEVICES: '4,5,6,7' });
    expect(many.out).toContain('CUDA_VISIBLE_DEVICES=4,5');
    expect(launchCheck(bundle, ['--gpus', '2', '--skip-sft']).out).toContain('CUDA_VISIBLE_DEVICES=0,1');
  });

  it('SFT GPUs against the val rows (one per GPU, spa_sft_trainer.py:189-199,602) and the batch; mini-batch against --gpus', () => {
    const bundle = path.join(tmp, 'bundle_paper-launch');
    const rows = (f: string) => fs.readFileSync(path.join(bundle, 'data', f), 'utf8').split('\n').filter(Boolean).length;
    const val = rows('wm_val.jsonl');
    expect(val).toBeGreaterThan(0);
    const tooMany = launchCheck(bundle, ['--gpus', '4', '--sft-gpus', String(val + 1)]);
    expect(tooMany.code).toBe(2);
    expect(tooMany.err).toMatch(new RegExp(`data/wm_val has ${val} row\\(s\\) but SFT on ${val + 1} GPUs needs at least one per GPU|` +
      `SFT batch 16 is not divisible by --sft-gpus ${val + 1}`));
    const mini = launchCheck(bundle, ['--gpus', '3', '--tp', '3', '--skip-sft']);
    expect(mini.err).toContain('ppo_mini_batch_size 64 must be a multiple of --gpus 3');
  });
});
