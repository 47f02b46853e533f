// Issue 22's proof that an env is a plug-in: KeyDoor (core/envs/key-door.ts, one file and a registry
// line, no edit to core/prompts, core/api or renderer/) end to end in a real browser against the
// real engine. A SPA run on KeyDoor completes; its eval episodes open in the trace inspector with
// the true boards drawn from the env's own legend (key and locked door cells included), the
// world-model score table and the wrong cells lit; a self-play episode replays step by step with
// the board at each step equal to the stored true state; the run's final eval carries KeyDoor's
// chance and oracle rows. Screenshots: test-results/screenshots/keydoor-*.png (and docs/screenshots
// with SPA_E2E_DOCS_SCREENSHOTS=1).
import type { WorkbenchClient } from '../../core/api/contract.js';
import type { RunStatus } from '../../core/api/records.js';
import { drawnKinds, episodesOf, expect, expectNoSidewaysScroll, setTheme, shot, test, walkReplay } from './helpers.js';

async function waitForEnd(api: WorkbenchClient, runId: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  let status: RunStatus = 'running';
  let reason: string | null = null;
  while (Date.now() < deadline) {
    const info = await api.runs.get({ runId });
    status = info.status;
    reason = info.reason;
    if (status === 'completed' || status === 'failed' || status === 'stopped') break;
    await new Promise((r) => setTimeout(r, 1500));
  }
  expect(status, `KeyDoor run ${runId} ended ${status}${reason ? `: ${reason}` : ''}`).toBe('completed');
}

test('a KeyDoor run end to end: trace inspector, replay and chance/oracle rows', async ({ workbench, consoleProblems }) => {
  test.setTimeout(600_000);
  const { page, api, go } = workbench;
  // the SPA pipeline at smoke size (self-play by the random-action generator, SFT, RL, eval), on KeyDoor
  const run = await api.runs.create({
    preset: 'spa', size: 'smoke', name: 'keydoor e2e',
    set: { 'env.id': 'keydoor' },
    start: true,
  });
  await waitForEnd(api, run.id, 480_000);
  const info = await api.runs.get({ runId: run.id });
  expect(info.config.env.id).toBe('keydoor');

  // the env's legend is served and holds the cells a KeyDoor board draws
  const { envs } = await api.envs.list({});
  const legend = envs.find((e) => e.id === 'keydoor')?.cells.map((c) => c.kind) ?? [];
  expect(legend).toEqual(expect.arrayContaining(['wall', 'floor', 'key', 'door', 'goal', 'player']));

  // ── trace inspector: an eval episode, its true boards drawn cell for cell from the stored state ──
  const evalEpisodes = await episodesOf(api, run.id, 'eval');
  expect(evalEpisodes.length).toBeGreaterThan(0);
  const episode = evalEpisodes.find((e) => e.turns.length > 0)!;
  expect(episode.env).toBe('keydoor');
  const turn = episode.turns[0]!;
  const kinds = turn.stateBefore.board.cells.flat();
  expect(kinds).toEqual(expect.arrayContaining(['wall', 'player', 'goal']));
  expect(kinds.every((k) => legend.includes(k)), `every drawn kind is in KeyDoor's legend: ${kinds.join(',')}`).toBe(true);
  expect(kinds.some((k) => k === 'key' || k === 'door'), 'a fresh KeyDoor level shows its key and its locked door').toBe(true);

  await setTheme(page, 'light');
  await go(`#/trace/${encodeURIComponent(run.id)}/${encodeURIComponent(episode.id)}`);
  await expect(page.getByTestId('trace-view')).toBeVisible();
  await expect(page.getByTestId('trace-episode')).toHaveAttribute('data-episode-id', episode.id);
  const card = page.getByTestId(`turn-${turn.turn}`);
  const truth = card.getByTestId('board-true-before');
  await expect(truth).toBeVisible();
  expect(await drawnKinds(page, `[data-testid="turn-${turn.turn}"] [data-testid="board-true-before"]`)).toEqual(kinds);
  // wrong cells of the model's observation are lit on the true board, as the engine scored them
  const wrong = turn.wm.observation?.wrongCells ?? [];
  await expect(truth.locator('g.board-cell[data-highlighted="true"]')).toHaveCount(wrong.length);
  await expectNoSidewaysScroll(page);
  await shot(page, 'keydoor-trace', { docs: true });

  // ── replay: a self-play episode, step by step, each step's board equal to the stored true state ──
  const selfplay = (await episodesOf(api, run.id, 'selfplay')).sort((a, b) => b.turns.length - a.turns.length)[0]!;
  expect(selfplay.turns.length).toBeGreaterThan(0);
  await go(`#/trace/${encodeURIComponent(run.id)}/${encodeURIComponent(selfplay.id)}`);
  await expect(page.getByTestId('trace-episode')).toHaveAttribute('data-episode-id', selfplay.id);
  await page.getByRole('button', { name: 'Replay ▶' }).click();
  await expect(page.getByTestId('replay-view')).toBeVisible();
  await expect(page.getByTestId('replay-position')).toContainText('step 0 /');
  await shot(page, 'keydoor-replay-step0', { docs: true });
  await walkReplay(page, selfplay);
  await shot(page, 'keydoor-replay-end', { docs: true });

  // ── the run's final eval: KeyDoor's chance and oracle rows beside the model ──
  const { results } = await api.evals.list({ runId: run.id });
  expect(results.length).toBeGreaterThan(0);
  expect(JSON.stringify(results)).toMatch(/chance/);
  expect(JSON.stringify(results)).toMatch(/oracle/);
  await go(`#/run/${encodeURIComponent(run.id)}`);
  const panel = page.getByTestId('final-eval');
  await expect(panel).toBeVisible();
  const final = (results.find((r) => r.id === 'final')?.result ?? {}) as { reference?: Array<{ kind: string; passAt: Record<string, number> }> };
  const oracle = final.reference?.find((r) => r.kind === 'oracle');
  expect(oracle, 'eval/final.json holds the oracle row').toBeTruthy();
  await expect(panel.getByTestId('passat-row-chance')).toBeVisible();
  await expect(panel.getByTestId('passat-row-oracle')).toContainText(`${(100 * oracle!.passAt['1']!).toFixed(1)}%`);
  await shot(page, 'keydoor-final-eval', { docs: true });
  expect(consoleProblems).toEqual([]);
});
