// Sokoban level generation as in gym-sokoban (room_utils.py): a random-walk room topology,
// boxes placed on targets, then reverse play (the player walks and pulls boxes) searched
// depth-first; the reverse state with the best score (pulls x total box displacement) becomes
// the start. Every generated level is solvable by construction (replay the pulls as pushes).
import type { Rng } from '../util/rng.js';
import type { SokobanLevel } from './sokoban-level.js';
import { EnvError } from './errors.js';

export interface GenerateSokobanOptions {
  width: number;
  height: number;
  numBoxes: number;
  /** Random-walk steps for the topology; gym-sokoban/RAGEN use int(1.7 * (width + height)). */
  numSteps?: number;
  /** Probability of changing direction at each random-walk step (0.35 in gym-sokoban). */
  pChangeDirections?: number;
  /** Depth limit of the reverse-play search (ttl in gym-sokoban). */
  searchDepth: number;
  /** Cap on reverse states explored per attempt (300000 in gym-sokoban). */
  maxExploredStates: number;
  /** Topology attempts before giving up. */
  maxAttempts: number;
}

// Masks stamped along the random walk (gym-sokoban's five 3x3 masks).
const MASKS = [
  [[0, 0, 0], [1, 1, 1], [0, 0, 0]],
  [[0, 1, 0], [0, 1, 0], [0, 1, 0]],
  [[0, 0, 0], [1, 1, 0], [0, 1, 0]],
  [[0, 0, 0], [1, 1, 0], [1, 1, 0]],
  [[0, 0, 0], [0, 1, 1], [0, 1, 0]],
];
const DIRECTIONS: [number, number][] = [[1, 0], [0, 1], [-1, 0], [0, -1]];
// Reverse-play moves in gym-sokoban's order: up, down, left, right.
const CHANGE: [number, number][] = [[-1, 0], [1, 0], [0, -1], [0, 1]];

/** Floor mask ([height][width], true = floor) from a random walk; the border is always wall. */
export function roomTopology(rng: Rng, width: number, height: number, numSteps: number, pChange: number): boolean[] {
  const level = new Array<number>(width * height).fill(0);
  let direction = rng.pick(DIRECTIONS);
  let r = rng.range(1, height - 1);
  let c = rng.range(1, width - 1);
  for (let s = 0; s < numSteps; s++) {
    if (rng.next() < pChange) direction = rng.pick(DIRECTIONS);
    r = Math.max(Math.min(r + direction[0], height - 2), 1);
    c = Math.max(Math.min(c + direction[1], width - 2), 1);
    const mask = rng.pick(MASKS);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) level[(r - 1 + i) * width + (c - 1 + j)] += mask[i][j];
  }
  const floor = level.map((v) => v > 0);
  for (let rr = 0; rr < height; rr++) for (let cc = 0; cc < width; cc++) {
    if (rr === 0 || cc === 0 || rr === height - 1 || cc === width - 1) floor[rr * width + cc] = false;
  }
  return floor;
}

interface ReverseResult { boxes: number[]; player: number; score: number }

/** Depth-first reverse play from the solved state; returns the best-scoring start state. */
function reversePlay(width: number, floor: boolean[], targets: number[], player: number, searchDepth: number, maxExplored: number): ReverseResult {
  const n = floor.length;
  const numBoxes = targets.length;
  const isTarget = new Array<boolean>(n).fill(false);
  for (const t of targets) isTarget[t] = true;
  const explored = new Set<string>();
  // boxes[i] is the current cell of the box that started on targets[i] (gym's box_mapping).
  const boxes = [...targets];
  let best: ReverseResult = { boxes: [...boxes], player, score: 0 };

  const displacement = () => {
    let sum = 0;
    for (let i = 0; i < numBoxes; i++) {
      sum += Math.abs(Math.floor(targets[i] / width) - Math.floor(boxes[i] / width)) + Math.abs((targets[i] % width) - (boxes[i] % width));
    }
    return sum;
  };

  // gym-sokoban counts "box swaps" as written: every pull increments the counter (its recursion
  // passes the parent's last_pull), so the score is pulls x displacement. Reproduced for parity.
  const dfs = (playerPos: number, pulls: number, ttl: number): void => {
    ttl -= 1;
    if (ttl <= 0 || explored.size >= maxExplored) return;
    const key = `${playerPos}|${[...boxes].sort((a, b) => a - b).join(',')}`;
    if (explored.has(key)) return;
    explored.add(key);
    let score = pulls * displacement();
    if (boxes.some((b) => isTarget[b])) score = 0;
    if (score > best.score) best = { boxes: [...boxes], player: playerPos, score };
    for (const [dr, dc] of CHANGE) {
      const next = playerPos + dr * width + dc;
      if (next < 0 || next >= n || !floor[next] || boxes.includes(next)) continue;
      const behind = playerPos - dr * width - dc;
      const pulled = behind >= 0 && behind < n ? boxes.indexOf(behind) : -1;
      if (pulled >= 0) boxes[pulled] = playerPos;
      dfs(next, pulled >= 0 ? pulls + 1 : pulls, ttl);
      if (pulled >= 0) boxes[pulled] = behind;
    }
  };
  dfs(player, 0, searchDepth);
  return best;
}

/** Generate one solvable level. Throws EnvError when no level scores above 0 in maxAttempts topologies. */
export function generateSokoban(rng: Rng, opts: GenerateSokobanOptions): SokobanLevel {
  const { width, height, numBoxes } = opts;
  const numSteps = opts.numSteps ?? Math.floor(1.7 * (width + height));
  const pChange = opts.pChangeDirections ?? 0.35;
  for (let attempt = 0; attempt < opts.maxAttempts; attempt++) {
    const floor = roomTopology(rng, width, height, numSteps, pChange);
    const free: number[] = [];
    for (let i = 0; i < floor.length; i++) if (floor[i]) free.push(i);
    if (free.length <= numBoxes + 1) continue;             // not enough free spots: new topology
    const player = free.splice(rng.int(free.length), 1)[0];
    const targets: number[] = [];
    for (let b = 0; b < numBoxes; b++) targets.push(free.splice(rng.int(free.length), 1)[0]);
    const best = reversePlay(width, floor, targets, player, opts.searchDepth, opts.maxExploredStates);
    if (best.score <= 0) continue;                          // gym-sokoban: "score == 0", retry
    const targetMask = new Array<boolean>(floor.length).fill(false);
    for (const t of targets) targetMask[t] = true;
    return {
      width, height,
      walls: floor.map((f) => !f),
      targets: targetMask,
      boxes: [...best.boxes].sort((a, b) => a - b),
      player: best.player,
    };
  }
  throw new EnvError('could not generate a Sokoban level', {
    where: `sokoban ${width}x${height} with ${numBoxes} box(es)`,
    expected: `a level with a positive reverse-play score within ${opts.maxAttempts} attempts`,
    received: 'none',
    hint: 'use a larger room, fewer boxes, or a larger searchDepth',
  });
}
