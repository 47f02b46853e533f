// Boards that tell the truth, and a trace list that fits (issue 37 items 2 and 4), on a fixture run
// whose rollouts are written as the engine writes them (rollouts/eval.jsonl + rollouts/index.jsonl):
// 32 eval episodes with the long ids, 7-digit seeds and two-digit format-error counts of a real
// quick run. One turn slipped (intended Up, moved Left) with a prediction of the intended outcome.
// Checks: the trace list shows every column unclipped at 1280, 1366 and 1440 px; the trace turn and
// the replay mark the slip and say the prediction matched the intended outcome; the replay draws
// the truth solid with the prediction as a corner inset. Screenshots at 1280 and 1440.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Board, EpisodeRecord, TurnRecord, WmScore } from '../../core/api/records.js';
import { clippedTexts, expect, shot, test } from './helpers.js';

const KIND: Record<string, string> = { _: 'frozen', O: 'hole', G: 'goal', P: 'player' };
const lake = (rows: string[]): Board => ({ env: 'frozenlake', rows: rows.length, cols: rows[0]!.length, cells: rows.map((r) => [...r].map((ch) => KIND[ch]! as Board['cells'][number][number])) });
const score = (wrong: Array<[number, number]>): WmScore => ({ parsed: true, exact: wrong.length === 0, cellAccuracy: 1 - wrong.length / 16, entityF1: {}, meanF1: 1, wrongCells: wrong });

const S0 = ['G_O_', '____', '_P__', '____'];
const SLIPPED = ['G_O_', '____', 'P___', '____'];   // Up slipped Left
const INTENDED = ['G_O_', '_P__', '____', '____'];  // what Up would have given

function turn(i: number, before: string[], after: string[], predicted: string[], slip: boolean): TurnRecord {
  const wrong: Array<[number, number]> = [];
  for (let r = 0; r < 4; r++) for (let c = 0; c < 4; c++) if (predicted[r]![c] !== after[r]![c]) wrong.push([r, c]);
  return {
    turn: i, prompt: `turn ${i}`, response: '<think><observation>…</observation><prediction>…</prediction></think><answer>Up</answer>',
    parsed: { observation: before.join('\n'), reasoning: null, prediction: predicted.join('\n'), answer: 'Up', actions: ['Up'], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: before.join('\n'), board: lake(before) }, stateAfter: { text: after.join('\n'), board: lake(after) },
    observedBoard: lake(before), predictedBoard: lake(predicted),
    wm: { observation: score([]), prediction: score(wrong) }, actionsExecuted: ['Up'], reward: -0.1,
    flags: { formatError: false, invalidAction: false, actionIsEffective: true }, tokens: { prompt: 120, response: 40 }, done: false,
    ...(slip ? { slip: { moves: [{ action: 0, intended: 'Up', executed: 'Left' }], intendedBoard: lake(INTENDED), predictionVsIntended: score([]) } } : {}),
  };
}

function writeRollouts(runDir: string, runId: string): string[] {
  mkdirSync(join(runDir, 'rollouts'), { recursive: true });
  const file = join(runDir, 'rollouts', 'eval.jsonl');
  writeFileSync(file, '');
  const ids: string[] = [];
  let offset = 0;
  for (let g = 0; g < 8; g++) for (let s = 0; s < 4; s++) {
    const id = `eval-eval-000000-g${String(g).padStart(4, '0')}-s${s}`;
    ids.push(id);
    // group 0: a slipped turn predicted as intended (2 wrong against the truth); the others all exact (WM 100.0%, the widest value)
    const turns = g === 0 ? [turn(0, S0, SLIPPED, INTENDED, true), turn(1, SLIPPED, SLIPPED, SLIPPED, false)] : [turn(0, S0, SLIPPED, SLIPPED, false)];
    const ep: EpisodeRecord = {
      id, runId, stage: 'eval', step: 0, env: 'frozenlake', envConfig: { isSlippery: true, successRate: 0.8 }, seed: 3_000_000 + g, group: g, sample: s,
      templateHash: 'bc97d40d1ee3', success: g === 1 && s === 3, totalReward: g === 1 && s === 3 ? 0.9 : -0.55, numTurns: 10, numActions: 5, formatErrors: g % 2 ? 10 + s : s, invalidActions: 4,
      terminated: false, truncated: true, initialState: { text: S0.join('\n'), board: lake(S0) }, turns, time: Date.now(),
    };
    const line = JSON.stringify(ep);
    appendFileSync(file, line + '\n');
    const length = Buffer.byteLength(line);
    appendFileSync(join(runDir, 'rollouts', 'index.jsonl'), JSON.stringify({
      id, stage: 'eval', step: 0, seed: ep.seed, group: g, sample: s, success: ep.success, totalReward: -0.55, numTurns: 10,
      formatErrors: ep.formatErrors, invalidActions: 4, file: 'rollouts/eval.jsonl', offset, length,
    }) + '\n');
    offset += length + 1;
  }
  return ids;
}

test('trace list fits at 1280-1440 px; a slip is marked on its turn in trace and replay, the prediction scored against the intended outcome', async ({ workbench, consoleProblems }) => {
  const { page, api, project, go } = workbench;
  const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', name: 'slippery fixture', start: false });
  const runDir = join(project.path, 'runs', run.id);
  const ids = writeRollouts(runDir, run.id);
  const rec = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(runDir, 'run.json'), JSON.stringify({ ...rec, env: 'frozenlake' }, null, 2));

  await go(`#/trace/${encodeURIComponent(run.id)}`);
  const table = page.locator('.trace-table');
  await expect(table.locator('tbody tr')).toHaveCount(32);
  for (const width of [1280, 1366, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await expect(table.locator('th')).toHaveCount(9);
    const overflow = await page.locator('.trace-table-scroll').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow, `the episode table scrolls sideways by ${overflow}px at ${width}px`).toBeLessThanOrEqual(1);
    expect(await clippedTexts(page, '.trace-table th, .trace-table td:not(.trace-id)'), `clipped at ${width}px`).toEqual([]);
  }

  await go(`#/trace/${encodeURIComponent(run.id)}/${encodeURIComponent(ids[1]!)}`);
  const slipped = page.getByTestId('turn-0');
  await expect(slipped.getByTestId('turn-slipped')).toBeVisible();
  await expect(slipped.getByTestId('turn-slip')).toContainText('the env slipped: intended Up, moved Left');
  await expect(slipped.getByTestId('turn-slip-score')).toHaveText('matched the intended outcome');
  await expect(page.getByTestId('turn-1').getByTestId('turn-slip')).toHaveCount(0);
  for (const width of [1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await shot(page, `trace-slip-${width}`);
  }

  await go(`#/replay/${encodeURIComponent(run.id)}/${encodeURIComponent(ids[1]!)}`);
  const side = page.getByTestId('replay-main');
  await expect(side).toBeVisible();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('replay-position')).toHaveText(/^step 1 \//);
  await expect(side.getByTestId('replay-slip')).toContainText('intended Up, moved Left');
  await expect(side.getByTestId('replay-slip-score')).toHaveText('matched the intended outcome');
  // the truth is solid: the true player's cell is drawn as the player, the prediction only as an inset where it differs
  await expect(side.locator('g.board-overlay-cell')).toHaveCount(2);
  await expect(side.locator('g.board-overlay-cell .board-overlay-inset')).toHaveCount(2);
  await expect(side.locator('g.board-cells [data-row="2"][data-col="0"]')).toHaveAttribute('data-cell-kind', 'player');
  await expect(page.locator('[data-legend-kind="overlay"]')).toBeVisible();
  for (const width of [1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await shot(page, `replay-slip-${width}`);
  }
  expect(consoleProblems).toEqual([]);
});
