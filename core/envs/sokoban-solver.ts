// Breadth-first Sokoban solver: the shortest plan in moves (steps), with dead-square pruning.
// Used for difficulty buckets (optimal length), `env solve`, and tests that generated levels are solvable.
import type { SokobanLevel } from './sokoban-level.js';

export const SOKOBAN_ACTIONS = ['Up', 'Down', 'Left', 'Right'] as const;
const DR = [-1, 1, 0, 0];
const DC = [0, 0, -1, 1];

export interface SokobanSolution {
  solved: boolean;            // a plan was found
  actions: string[];          // optimal plan (empty when unsolved or already solved)
  length: number;             // plan length, or -1 when no plan was found
  explored: number;           // states expanded
  exhausted: boolean;         // true: the search hit maxStates before finishing (the level may still be solvable)
}

/** Cells from which a box can still reach some target (pull-reachability from the targets). */
export function liveSquares(level: SokobanLevel): boolean[] {
  const { width, height, walls, targets } = level;
  const n = width * height;
  const live = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) if (targets[i] && !walls[i]) { live[i] = true; stack.push(i); }
  while (stack.length > 0) {
    const i = stack.pop()!;
    const r = Math.floor(i / width);
    const c = i % width;
    for (let d = 0; d < 4; d++) {
      // a box at (r+dr, c+dc) pushed towards i needs the player at (r+2dr, c+2dc)
      const r1 = r + DR[d]; const c1 = c + DC[d];
      const r2 = r + 2 * DR[d]; const c2 = c + 2 * DC[d];
      if (r2 < 0 || r2 >= height || c2 < 0 || c2 >= width) continue;
      const j = r1 * width + c1;
      const k = r2 * width + c2;
      if (!walls[j] && !walls[k] && !live[j]) { live[j] = true; stack.push(j); }
    }
  }
  return live;
}

export function solveSokoban(level: SokobanLevel, maxStates = 2_000_000): SokobanSolution {
  const { width, height, walls, targets } = level;
  const n = width * height;
  const k = level.boxes.length;
  const live = liveSquares(level);
  const isSolved = (boxes: ArrayLike<number>) => { for (let i = 0; i < boxes.length; i++) if (!targets[boxes[i]]) return false; return true; };
  const start = [...level.boxes].sort((a, b) => a - b);
  if (isSolved(start)) return { solved: true, actions: [], length: 0, explored: 0, exhausted: false };
  for (const b of start) if (!live[b]) return { solved: false, actions: [], length: -1, explored: 0, exhausted: false };

  const numericKeys = Math.pow(n, k + 1) < Number.MAX_SAFE_INTEGER;
  const keyOf = (player: number, boxes: ArrayLike<number>): number | string => {
    if (numericKeys) {
      let key = player;
      let mul = n;
      for (let i = 0; i < boxes.length; i++) { key += boxes[i] * mul; mul *= n; }
      return key;
    }
    return `${player}:${Array.prototype.join.call(boxes, ',')}`;
  };

  // State storage: players[i], boxes[i*k .. i*k+k), parent[i], move[i]
  const players: number[] = [level.player];
  const boxStore: number[] = [...start];
  const parent: number[] = [-1];
  const moves: number[] = [-1];
  const seen = new Set<number | string>([keyOf(level.player, start)]);
  const cur = new Array<number>(k);
  let head = 0;
  while (head < players.length) {
    if (head >= maxStates) return { solved: false, actions: [], length: -1, explored: head, exhausted: true };
    const player = players[head];
    for (let i = 0; i < k; i++) cur[i] = boxStore[head * k + i];
    const pr = Math.floor(player / width);
    const pc = player % width;
    for (let d = 0; d < 4; d++) {
      const r1 = pr + DR[d]; const c1 = pc + DC[d];
      if (r1 < 0 || r1 >= height || c1 < 0 || c1 >= width) continue;
      const next = r1 * width + c1;
      if (walls[next]) continue;
      const boxIndex = cur.indexOf(next);
      let nextBoxes: number[] = cur;
      if (boxIndex >= 0) {
        const r2 = r1 + DR[d]; const c2 = c1 + DC[d];
        if (r2 < 0 || r2 >= height || c2 < 0 || c2 >= width) continue;
        const beyond = r2 * width + c2;
        if (walls[beyond] || cur.includes(beyond) || !live[beyond]) continue;
        nextBoxes = [...cur];
        nextBoxes[boxIndex] = beyond;
        nextBoxes.sort((a, b) => a - b);
      }
      const key = keyOf(next, nextBoxes);
      if (seen.has(key)) continue;
      seen.add(key);
      players.push(next);
      for (let i = 0; i < k; i++) boxStore.push(nextBoxes[i]);
      parent.push(head);
      moves.push(d);
      if (boxIndex >= 0 && isSolved(nextBoxes)) {
        const actions: string[] = [];
        for (let s = players.length - 1; s > 0; s = parent[s]) actions.push(SOKOBAN_ACTIONS[moves[s]]);
        actions.reverse();
        return { solved: true, actions, length: actions.length, explored: head + 1, exhausted: false };
      }
    }
    head++;
  }
  return { solved: false, actions: [], length: -1, explored: head, exhausted: false };
}
