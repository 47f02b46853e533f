// Env checker (after Gymnasium's check_env): run over every registered env by the tests.
// Checks: same seed → same episode; observations, boards and entities well-formed; getState /
// setState round trip (JSON-serialisable, continues identically); step before reset and step
// after the end are clear errors; unknown actions are flagged, not executed; terminated and
// truncated are never both true.
import { BoardSchema } from '../api/records.js';
import type { Env, StepResult } from './types.js';
import { Rng } from '../util/rng.js';

export interface CheckReport { env: string; ok: boolean; problems: string[]; stepsRun: number }

export interface CheckOptions {
  seeds?: number[];          // seeds to reset with (default [0, 1, 2])
  maxSteps?: number;         // random actions per episode (default 40)
  actionSeed?: number;       // seed of the checker's own action RNG
}

function wellFormed(env: Env, where: string, problems: string[]): void {
  const board = env.board();
  const parsed = BoardSchema.safeParse(board);
  if (!parsed.success) problems.push(`${where}: board() does not match BoardSchema: ${parsed.error.message}`);
  if (board.env !== env.id) problems.push(`${where}: board().env is ${JSON.stringify(board.env)}, expected ${JSON.stringify(env.id)}`);
  if (board.cells.length !== board.rows || board.cells.some((row) => row.length !== board.cols)) {
    problems.push(`${where}: board() cells are not ${board.rows}x${board.cols}`);
  }
  const grid = env.gridText();
  if (typeof grid !== 'string' || grid.length === 0) problems.push(`${where}: gridText() is empty`);
  for (const e of env.entities()) {
    if (!Number.isInteger(e.row) || !Number.isInteger(e.col) || e.row < 0 || e.col < 0 || e.row >= board.rows || e.col >= board.cols) {
      problems.push(`${where}: entity ${JSON.stringify(e)} is outside the ${board.rows}x${board.cols} board`);
    }
  }
  if (env.legalActions().length === 0 && !where.includes('end')) problems.push(`${where}: legalActions() is empty`);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Run the checks on an env factory (a fresh env per check). */
export function checkEnv(make: () => Env, opts: CheckOptions = {}): CheckReport {
  const problems: string[] = [];
  const seeds = opts.seeds ?? [0, 1, 2];
  const maxSteps = opts.maxSteps ?? 40;
  let stepsRun = 0;
  const probe = make();
  const id = probe.id;

  // Step before reset.
  try {
    probe.step(probe.legalActions()[0] ?? 'x');
    problems.push('step() before reset() did not throw');
  } catch (e) {
    if (!/reset/i.test(String((e as Error).message))) problems.push(`step() before reset() threw an unclear message: ${(e as Error).message}`);
  }

  for (const seed of seeds) {
    try {
      checkSeed(seed);
    } catch (e) {
      problems.push(`seed ${seed}: threw ${(e as Error).message}`);
    }
  }
  function checkSeed(seed: number): void {
    const a = make();
    const b = make();
    const ra = a.reset({ seed });
    const rb = b.reset({ seed });
    if (!same(ra.observation, rb.observation)) problems.push(`seed ${seed}: two resets gave different observations`);
    if (typeof ra.info.success !== 'boolean' || typeof ra.info.actionIsValid !== 'boolean' || typeof ra.info.actionIsEffective !== 'boolean') {
      problems.push(`seed ${seed}: reset info lacks success/actionIsValid/actionIsEffective booleans`);
    }
    wellFormed(a, `seed ${seed} after reset`, problems);

    // Unknown action is flagged and changes nothing.
    const before = a.gridText();
    const bad = a.step('definitely-not-an-action');
    if (bad.info.actionIsValid !== false) problems.push(`seed ${seed}: unknown action not flagged actionIsValid = false`);
    if (a.gridText() !== before) problems.push(`seed ${seed}: unknown action changed the state`);
    b.step('definitely-not-an-action');

    const rng = new Rng(opts.actionSeed ?? 1234 + seed);
    let ended = false;
    for (let t = 0; t < maxSteps && !ended; t++) {
      const actions = a.legalActions();
      const action = actions[rng.int(actions.length)];
      // Snapshot and restore: the snapshot (JSON round trip) must continue exactly like the original.
      const snapshot = JSON.parse(JSON.stringify(a.getState()));
      const sa: StepResult<unknown> = a.step(action);
      stepsRun++;
      let sb: StepResult<unknown> | null = null;
      try { sb = b.step(action); } catch { sb = null; }
      if (!same(sa, sb)) {
        problems.push(`seed ${seed} step ${t}: same seed and actions gave different results`);
        break;
      }
      const c = make();
      c.setState(snapshot);
      const sc = c.step(action);
      if (!same(sa, sc)) problems.push(`seed ${seed} step ${t}: setState(getState()) did not continue identically`);
      if (typeof sa.reward !== 'number' || !Number.isFinite(sa.reward)) problems.push(`seed ${seed} step ${t}: reward ${String(sa.reward)} is not ` +
        `a finite number`);
      if (sa.terminated && sa.truncated) problems.push(`seed ${seed} step ${t}: terminated and truncated both true`);
      if (sa.info.actionIsValid !== true) problems.push(`seed ${seed} step ${t}: legal action ${JSON.stringify(action)} flagged invalid`);
      if (sa.observation !== a.gridText()) problems.push(`seed ${seed} step ${t}: observation differs from gridText()`);
      wellFormed(a, `seed ${seed} step ${t}${sa.terminated || sa.truncated ? ' (end)' : ''}`, problems);
      ended = sa.terminated || sa.truncated;
      if (ended) {
        try {
          a.step(action);
          problems.push(`seed ${seed}: step() after the episode ended did not throw`);
        } catch (e) {
          if (!/reset/i.test(String((e as Error).message))) problems.push(`seed ${seed}: step() after the end threw an unclear ` +
            `message: ${(e as Error).message}`);
        }
      }
    }
  }
  // Different seeds should usually give different puzzles.
  const obs = seeds.map((seed) => { const e = make(); return JSON.stringify(e.reset({ seed }).observation); });
  if (seeds.length >= 3 && new Set(obs).size === 1) problems.push(`seeds ${seeds.join(', ')} all gave the same puzzle`);
  return { env: id, ok: problems.length === 0, problems, stepsRun };
}
