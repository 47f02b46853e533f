// Reference rows of every study table: what a well-formatted uniform random policy ("chance") and
// an optimal policy ("oracle") score on the same held-out puzzles under the same turn protocol
// (turns, actions per turn, actions per game). A method at or below chance learned nothing the
// table can show.
//   chance  each turn writes 1..min(actionsPerTurn, actions left) actions, each uniform over the
//           legal actions (the random writer of the bootstrap and the random-action ablation).
//           FrozenLake: exact (distribution propagation); other envs: Monte Carlo (seeded).
//   oracle  FrozenLake: exact dynamic programming over the turn protocol (an open-loop sequence per
//           turn, the state observed between turns, slips included); deterministic envs (Sokoban,
//           Sudoku): the env's solver (Sokoban BFS, shortest plan) within the action budget.
// Per puzzle the success probability p; Pass@k of a reference = mean over puzzles of 1 − (1 − p)^k
// (independent samples), the expectation of the unbiased estimator.
import { createEnv, getEnvDefinition } from '../envs/index.js';
import type { Env } from '../envs/types.js';
import type { FrozenLakeEnv } from '../envs/frozen-lake.js';
import { Rng } from '../util/rng.js';

export interface Protocol { maxTurns: number; maxActionsPerTurn: number; maxActionsPerGame: number }

export interface ReferenceRow {
  env: string;
  kind: 'chance' | 'oracle';
  label: string;                     // "chance (random, well-formed)" / "oracle (optimal)"
  how: string;                       // exact DP / Monte Carlo N / BFS within the budget
  puzzles: number;
  perPuzzle: number[];               // success probability per puzzle, in seed order
  passAt: Record<string, number>;    // k → mean over puzzles of 1 − (1 − p)^k
}

export interface ReferenceRequest {
  envId: string;
  envOptions: Record<string, unknown>;
  protocol: Protocol;
  seeds: number[];                   // the held-out puzzle seeds
  ks: number[];
  monteCarlo?: number;               // rollouts per puzzle where chance is not exact (default 2000)
}

/** The protocol of a run: rollout limits over the env's budget. */
export function protocolOf(envId: string, limits: { maxTurns?: number; maxActionsPerTurn?: number; maxActionsPerGame?: number }): Protocol {
  const budget = getEnvDefinition(envId).budget;
  return {
    maxTurns: limits.maxTurns ?? budget.maxTurns,
    maxActionsPerTurn: limits.maxActionsPerTurn ?? budget.maxActionsPerTurn,
    maxActionsPerGame: limits.maxActionsPerGame ?? budget.maxActionsPerGame,
  };
}

export function passAtFromProbabilities(perPuzzle: number[], ks: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of ks) out[String(k)] = perPuzzle.length === 0 ? Number.NaN : perPuzzle.reduce((a, p) => a + 1 - (1 - p) ** k, 0) / perPuzzle.length;
  return out;
}

// ───────────────────────── FrozenLake: exact ─────────────────────────

interface Lake { rows: number; cols: number; tiles: string[]; success: number; slippery: boolean }

const DR = [0, 1, 0, -1];
const DC = [-1, 0, 1, 0];

function lakeOf(env: FrozenLakeEnv): Lake {
  const state = env.getState();
  const map = env.currentMap();
  return {
    rows: map.length,
    cols: map[0]!.length,
    tiles: map.join('').split(''),
    success: state.options.successRate as number,
    slippery: state.options.isSlippery as boolean,
  };
}

/** trans[cell][action] = [to, p] pairs of one intended move (Gymnasium's slip rule: intended with successRate, each side (1 − successRate)/2). */
function transitions(lake: Lake): Array<Array<Array<[number, number]>>> {
  const n = lake.rows * lake.cols;
  return Array.from({ length: n }, (_, cell) => Array.from({ length: 4 }, (_, action) => {
    const dirs: Array<[number, number]> = lake.slippery
      ? [[action, lake.success], [(action + 3) % 4, (1 - lake.success) / 2], [(action + 1) % 4, (1 - lake.success) / 2]]
      : [[action, 1]];
    const r = Math.floor(cell / lake.cols), c = cell % lake.cols;
    return dirs.filter(([, p]) => p > 0).map(([d, p]): [number, number] => {
      const rr = Math.min(Math.max(r + DR[d]!, 0), lake.rows - 1), cc = Math.min(Math.max(c + DC[d]!, 0), lake.cols - 1);
      return [rr * lake.cols + cc, p];
    });
  }));
}

/** One step of a distribution over live cells (holes drop out, goal mass is returned). */
function stepDistribution(
  lake: Lake,
  trans: Array<Array<Array<[number, number]>>>,
  dist: Float64Array,
  action: number | null,
): { next: Float64Array; goal: number } {
  const next = new Float64Array(dist.length);
  let goal = 0;
  const actions = action === null ? [0, 1, 2, 3] : [action];
  const weight = 1 / actions.length;
  for (let cell = 0; cell < dist.length; cell++) {
    const p = dist[cell]!;
    if (p === 0) continue;
    for (const a of actions) {
      for (const [to, q] of trans[cell]![a]!) {
        const tile = lake.tiles[to]!;
        if (tile === 'G') goal += p * q * weight;
        else if (tile !== 'H') next[to]! += p * q * weight;
      }
    }
  }
  return { next, goal };
}

/** Success probability under a policy over the turn protocol; `turnValue` gives a turn's best or mean continuation. */
function lakeValue(lake: Lake, start: number, protocol: Protocol, optimal: boolean): number {
  const trans = transitions(lake);
  const n = lake.rows * lake.cols;
  const memo = new Map<number, number>();
  const value = (cell: number, turns: number, actions: number): number => {
    if (lake.tiles[cell] === 'G') return 1;
    if (lake.tiles[cell] === 'H' || turns === 0 || actions === 0) return 0;
    const key = (cell * 64 + turns) * 1024 + actions;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const limit = Math.min(protocol.maxActionsPerTurn, actions);
    const continuation = (dist: Float64Array, goal: number, depth: number): number => {
      let v = goal;
      for (let c = 0; c < n; c++) if (dist[c]! > 0) v += dist[c]! * value(c, turns - 1, actions - depth);
      return v;
    };
    const startDist = new Float64Array(n);
    startDist[cell] = 1;
    let result = 0;
    if (optimal) {
      // the best open-loop sequence of 1..limit actions this turn
      const search = (dist: Float64Array, goal: number, depth: number): void => {
        if (depth > 0) result = Math.max(result, continuation(dist, goal, depth));
        if (depth === limit || !dist.some((p) => p > 0)) return;
        for (let a = 0; a < 4; a++) {
          const s = stepDistribution(lake, trans, dist, a);
          search(s.next, goal + s.goal, depth + 1);
        }
      };
      search(startDist, 0, 0);
    } else {
      // a uniform count in 1..limit, each action uniform
      let dist: Float64Array = startDist, goal = 0;
      for (let count = 1; count <= limit; count++) {
        const s = stepDistribution(lake, trans, dist, null);
        dist = s.next;
        goal += s.goal;
        result += continuation(dist, goal, count) / limit;
      }
    }
    memo.set(key, result);
    return result;
  };
  return value(start, protocol.maxTurns, protocol.maxActionsPerGame);
}

/** Exact success probability of the optimal policy (an open-loop sequence per turn, the state seen between turns). */
export function frozenLakeOracle(lake: Lake, start: number, protocol: Protocol): number { return lakeValue(lake, start, protocol, true); }

/** Exact success probability of the well-formatted uniform random policy. */
export function frozenLakeChance(lake: Lake, start: number, protocol: Protocol): number { return lakeValue(lake, start, protocol, false); }

// ───────────────────────── generic: solver and Monte Carlo ─────────────────────────

/** Deterministic envs: the solver's shortest plan fits the budget (turns × per-turn, and the game budget). */
function solverOracle(env: Env, envId: string, protocol: Protocol): number {
  const plan = getEnvDefinition(envId).solve?.(env);
  if (!plan || !plan.solved) return 0;
  const budget = Math.min(protocol.maxActionsPerGame, protocol.maxTurns * protocol.maxActionsPerTurn);
  return plan.actions.length <= budget ? 1 : 0;
}

/** Monte Carlo success rate of the well-formatted uniform random policy (seeded). */
function monteCarloChance(env: Env, protocol: Protocol, rollouts: number, seed: number): number {
  const saved = env.getState();
  const rng = new Rng(seed);
  let wins = 0;
  for (let i = 0; i < rollouts; i++) {
    env.setState(saved);
    let left = protocol.maxActionsPerGame;
    let done = false, success = false;
    for (let turn = 0; turn < protocol.maxTurns && !done && left > 0; turn++) {
      const legal = env.legalActions();
      const count = 1 + rng.int(Math.min(protocol.maxActionsPerTurn, left));
      for (let a = 0; a < count && !done; a++) {
        const r = env.step(legal[rng.int(legal.length)]!);
        left--;
        if (r.info.success) success = true;
        done = r.terminated || r.truncated;
      }
    }
    if (success) wins++;
  }
  env.setState(saved);
  return wins / rollouts;
}

const cache = new Map<string, ReferenceRow[]>();

/** Chance and oracle rows for an env on the given puzzles (cached per request). */
export function referenceRows(req: ReferenceRequest): ReferenceRow[] {
  const key = JSON.stringify(req);
  const hit = cache.get(key);
  if (hit) return hit;
  const rollouts = req.monteCarlo ?? 2000;
  const chance: number[] = [], oracle: number[] = [];
  let chanceHow = 'exact', oracleHow = 'exact DP over the turn protocol';
  for (const seed of req.seeds) {
    const env = createEnv(req.envId, req.envOptions);
    env.reset({ seed });
    if (env.id === 'frozenlake') {
      const lake = env as unknown as FrozenLakeEnv;
      const l = lakeOf(lake);
      const [r, c] = lake.playerPosition();
      chance.push(frozenLakeChance(l, r * l.cols + c, req.protocol));
      oracle.push(frozenLakeOracle(l, r * l.cols + c, req.protocol));
    } else {
      chance.push(monteCarloChance(env, req.protocol, rollouts, seed));
      oracle.push(solverOracle(env, req.envId, req.protocol));
      chanceHow = `Monte Carlo, ${rollouts} rollouts per puzzle`;
      oracleHow = 'shortest plan (solver) within the action budget';
    }
  }
  const rows: ReferenceRow[] = [
    {
      env: req.envId,
      kind: 'chance',
      label: 'chance (random, well-formed)',
      how: chanceHow,
      puzzles: req.seeds.length,
      perPuzzle: chance,
      passAt: passAtFromProbabilities(chance, req.ks),
    },
    {
      env: req.envId,
      kind: 'oracle',
      label: 'oracle (optimal)',
      how: oracleHow,
      puzzles: req.seeds.length,
      perPuzzle: oracle,
      passAt: passAtFromProbabilities(oracle, req.ks),
    },
  ];
  cache.set(key, rows);
  return rows;
}
