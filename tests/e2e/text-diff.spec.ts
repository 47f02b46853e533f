// Text states in the trace inspector and the replay (issue 38 item 5), in the browser against the real server: a TextWorld
// episode written as the engine writes rollouts (rollouts/eval.jsonl + index.jsonl). The states are a real TextWorld transition
// (coin-easy seed 1000000, turn 1: "go south" from the cookhouse to the shower, from a self-play game of the first SmolLM2 run);
// the model's <observation> and <prediction> are PREDICTION / OBSERVATION below. The turn shows a word diff with "−" struck and
// "+" underlined runs and its score line, no boards; the replay shows the state text and, with the prediction overlay, the diff.
// Screenshots: test-results/screenshots/text-diff-trace.png and text-diff-replay.png.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Board, EpisodeRecord, TurnRecord } from '../../core/api/records.js';
import { expect, shot, test } from './helpers.js';

const BEFORE = "-= Cookhouse =-\nYou find yourself in a cookhouse. A typical kind of place. You begin to take stock of what's here.\n\n" +
  "There is an exit to the south. Don't worry, it is unblocked.\n\nAdmissible commands: go south, inventory, look";
const AFTER = "-= Shower =-\nYou're now in the shower. You decide to just list off a complete list of everything you see in the room, because hey, why not?" +
  "\n\nYou need an unguarded exit? You should try going north. There is an exit to the west. Don't worry, it is unblocked.\n\n" +
  'Admissible commands: go north, go west, inventory, look';
// the model's texts (a prediction that gets the room and the way back right, and the other exit and its commands wrong)
const OBSERVATION = BEFORE;
const PREDICTION = "-= Shower =-\nYou're now in the shower. There is an exit to the north. Don't worry, it is unblocked.\n\n" +
  'Admissible commands: go north, inventory, look';

const lines = (text: string): Board => {
  const ls = text.split('\n').filter((l) => l.trim().length > 0);
  return { env: 'textworld', rows: ls.length, cols: 1, cells: ls.map(() => ['line']), values: ls.map((_, i) => [i]) };
};

function textTurn(i: number, before: string, after: string, prediction: string, observation: string): TurnRecord {
  const truth = lines(after).values!.length;
  return {
    turn: i, prompt: `Find the coin and take it.\n${before}`,
    response: `<think><observation>\n${observation}\n</observation>\nI will try go south.\n<prediction>\n${prediction}\n</prediction></think><answer>go south</answer>`,
    parsed: { observation, reasoning: 'I will try go south.', prediction, answer: 'go south', actions: ['go south'], unknownActions: [], formatError: false, formatErrors: [] },
    stateBefore: { text: before, board: lines(before) }, stateAfter: { text: after, board: lines(after) },
    observedBoard: lines(observation), predictedBoard: lines(prediction),
    wm: {
      observation: { parsed: true, exact: true, cellAccuracy: 1, entityF1: {}, meanF1: 1, wrongCells: [] },
      prediction: { parsed: true, exact: false, cellAccuracy: 2 / truth, entityF1: {}, meanF1: 0, wrongCells: [[2, 0], [3, 0]] },
    },
    actionsExecuted: ['go south'], reward: 0, flags: { formatError: false, invalidAction: false, actionIsEffective: true },
    tokens: { prompt: 180, response: 160 }, done: false,
  };
}

function writeRollouts(runDir: string, runId: string): string {
  mkdirSync(join(runDir, 'rollouts'), { recursive: true });
  const id = 'eval-eval-000000-g0000-s0';
  const ep: EpisodeRecord = {
    id, runId, stage: 'eval', step: 0, env: 'textworld', envConfig: { level: 'coin-easy' }, seed: 1_000_000, group: 0, sample: 0,
    templateHash: 'bc97d40d1ee3', success: false, totalReward: 0, numTurns: 1, numActions: 1, formatErrors: 0, invalidActions: 0,
    terminated: false, truncated: true, initialState: { text: BEFORE, board: lines(BEFORE) },
    turns: [textTurn(0, BEFORE, AFTER, PREDICTION, OBSERVATION)], time: Date.now(),
  };
  const line = JSON.stringify(ep);
  writeFileSync(join(runDir, 'rollouts', 'eval.jsonl'), `${line}\n`);
  appendFileSync(join(runDir, 'rollouts', 'index.jsonl'), `${JSON.stringify({
    id, stage: 'eval', step: 0, seed: ep.seed, group: 0, sample: 0, success: false, totalReward: 0, numTurns: 1,
    formatErrors: 0, invalidActions: 0, file: 'rollouts/eval.jsonl', offset: 0, length: Buffer.byteLength(line),
  })}\n`);
  return id;
}

test('a text env\'s turn shows the prediction against the true next state as a word diff, in trace and replay', async ({ workbench, consoleProblems }) => {
  const { page, api, project, go } = workbench;
  const run = await api.runs.create({ preset: 'sft-only', size: 'smoke', name: 'textworld fixture', start: false });
  const runDir = join(project.path, 'runs', run.id);
  const id = writeRollouts(runDir, run.id);
  const rec = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(runDir, 'run.json'), JSON.stringify({ ...rec, env: 'textworld' }, null, 2));

  await page.setViewportSize({ width: 1280, height: 900 });
  await go(`#/trace/${encodeURIComponent(run.id)}/${encodeURIComponent(id)}`);
  const turn = page.getByTestId('turn-0');
  const pred = turn.getByTestId('text-diff-prediction');
  await expect(pred).toBeVisible();
  await expect(turn.getByTestId('board-predicted')).toHaveCount(0);
  await expect(pred.getByTestId('text-diff-prediction-score')).toHaveText(/^exact after normalisation: no · lines equal in place 50%/);
  await expect(pred.getByTestId('text-diff-prediction-text').locator('ins').first()).toContainText('decide to just list off');
  await expect(pred.getByTestId('text-diff-prediction-text').locator('del').first()).toContainText('north.');
  await expect(turn.getByTestId('text-diff-observation-score')).toHaveText(/^exact after normalisation: yes/);
  await pred.scrollIntoViewIfNeeded();
  await shot(page, 'text-diff-trace');

  await go(`#/replay/${encodeURIComponent(run.id)}/${encodeURIComponent(id)}`);
  await expect(page.getByTestId('replay-text')).toContainText('You find yourself in a cookhouse.');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('replay-position')).toHaveText(/^step 1 \//);
  await expect(page.getByTestId('replay-text-diff')).toBeVisible();
  await shot(page, 'text-diff-replay');
  expect(consoleProblems).toEqual([]);
});
