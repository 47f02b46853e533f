// Issue 21 M5: the exported SFT rows are in the chat layout of SPA's released SFT data (SPA @3848e68
// SPA_agent/ctx_manager.py:168-194, 336-361; SPA_agent/generate_sft_data.py:254-268), compared with a
// message-level copy of that code (tests/fixtures/interop/spa_agent_layout.py) run on the same games; and an SFT
// row differs from RAGEN's PPO prompt of the same game (RAGEN @5eb79b8 ragen/llm_agent/ctx_manager.py:120-127,
// 248-263) only in the format line, as in the release.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportSpaRagenBundle, INTEROP_RESOURCES } from '../../core/interop/export-bundle.js';
import { FORMAT_PROMPT, pythonNumberText } from '../../core/interop/spa-chat.js';
import { makeWorkbenchRun, pythonHas, runPython, type FixtureRun } from './workbench-run.js';

const RAGEN_STUB = fileURLToPath(new URL('../fixtures/interop-ragen-stub/', import.meta.url));
const LAYOUT_PY = fileURLToPath(new URL('../fixtures/interop/spa_agent_layout.py', import.meta.url));
const HAS_PY = pythonHas(['yaml', 'omegaconf']);
let tmp: string;

beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-layout-')); });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Msg = { role: string; content: string };
const readRows = (file: string) => fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

/** The RAGEN histories (es_manager's rollout cache) of each workbench SFT row's game up to its turn, plus the exported prompts. */
function gamesOf(run: FixtureRun, bundle: string) {
  const wbRows = [...readRows(path.join(run.runDir, 'datasets/sft-train.jsonl')), ...readRows(path.join(run.runDir, 'datasets/sft-val.jsonl'))];
  const exported = [...readRows(path.join(bundle, 'data/wm_train.jsonl')), ...readRows(path.join(bundle, 'data/wm_val.jsonl'))];
  expect(exported.length).toBe(wbRows.length);
  const cfgFile = path.join(bundle, 'config', fs.readdirSync(path.join(bundle, 'config'))[0]!);
  const maxActions = Number(/max_actions_per_traj: (\d+)/.exec(fs.readFileSync(cfgFile, 'utf8'))![1]);
  const games = wbRows.map((row) => {
    const ep = run.episodes.find((e) => e.id === row.episodeId)!;
    const replies = (row.messages as Msg[]).filter((m) => m.role === 'assistant').map((m) => m.content);
    let left = maxActions;
    const history: Record<string, unknown>[] = [];
    for (let k = 0; k <= row.turn; k++) {
      const t = ep.turns[k]!;
      history.push({ state: t.stateBefore.text, actions_left: left, llm_response: replies[k], reward: t.reward, n_actions: t.actionsExecuted.length });
      left -= t.actionsExecuted.length;
    }
    history.push({ state: ep.turns[row.turn]!.stateAfter.text, actions_left: left });   // the n+1 state, dropped by prepare_for_update
    return { env_id: 0, history };
  });
  return { cfgFile, games, rows: wbRows.map((r, i) => [i, r.turn]), exported: exported.map((r) => r.prompt as Msg[]) };
}

function upstreamPrompts(cfgFile: string, games: unknown, rows: unknown, ragen: 'spa' | 'ragen', mode: 'add_worldmodel' | 'base'): Msg[][] {
  return JSON.parse(runPython([LAYOUT_PY, RAGEN_STUB, path.join(INTEROP_RESOURCES, 'workbench_env.py')],
    JSON.stringify({ config: cfgFile, ragen, mode, games, rows }))) as Msg[][];
}

describe.skipIf(!HAS_PY)('M5: SFT rows in SPA_agent ctx_manager layout', () => {
  for (const env of ['sokoban', 'frozenlake'] as const) {
    it(`${env}: every exported row's prompt equals the release's ctx_manager chat; PPO prompts differ only in the format line`, async () => {
      const run = await makeWorkbenchRun(path.join(tmp, `p-${env}`), { env, games: 4 });
      const bundle = path.join(tmp, `bundle-${env}`);
      exportSpaRagenBundle({ runDir: run.runDir, out: bundle });
      const { cfgFile, games, rows, exported } = gamesOf(run, bundle);
      expect(exported.length).toBeGreaterThan(2);
      expect(exported.some((p) => p.length > 2)).toBe(true);          // rows past turn 1 carry assistant and Reward messages
      const release = upstreamPrompts(cfgFile, games, rows, 'spa', 'add_worldmodel');
      expect(exported).toEqual(release);
      expect(exported[0]![0]).toEqual({ role: 'system', content: "You're a helpful assistant. " });
      expect(exported[0]![1]!.content).toContain('\nThe meaning of each symbol in the state is:\n');
      const ppo = upstreamPrompts(cfgFile, games, rows, 'ragen', 'base');
      const asPpo = exported.map((p) => p.map((m) => ({ role: m.role, content: m.content.split(FORMAT_PROMPT.add_worldmodel).join(FORMAT_PROMPT.base) })));
      expect(asPpo).toEqual(ppo);
      const readme = fs.readFileSync(path.join(bundle, 'README.md'), 'utf8');
      expect(readme).toContain('SPA_agent/ctx_manager.py');
      expect(readme).not.toContain('SFT rows keep the workbench run\'s chat layout');
    }, 120_000);
  }
});

describe('pythonNumberText: Python str() of the reward RAGEN writes', () => {
  it('int 0 when no action ran, float repr otherwise', () => {
    expect(pythonNumberText(0, false)).toBe('0');
    expect(pythonNumberText(0, true)).toBe('0.0');
    expect(pythonNumberText(1, true)).toBe('1.0');
    expect(pythonNumberText(-0.1, true)).toBe('-0.1');
    expect(pythonNumberText(0.00001, true)).toBe('1e-05');
    expect(pythonNumberText(0.30000000000000004, true)).toBe('0.30000000000000004');
  });
});
