// Sokoban levels: the static layout (walls, targets) plus the movable parts (boxes, player),
// flat row-major cell indices. XSB import/export lives here too.
import { EnvError, show } from './errors.js';

export interface SokobanLevel {
  width: number;
  height: number;
  walls: boolean[];      // [height*width] true where the cell is a wall
  targets: boolean[];    // [height*width] true where the cell is a target
  boxes: number[];       // cell indices of the boxes (sorted ascending)
  player: number;        // cell index of the player
}

export const SOKOBAN_SYMBOLS = {
  wall: '#', floor: '_', target: 'O', box: 'X', boxOnTarget: '√', player: 'P', playerOnTarget: 'S',
} as const;

/** Check that a level is well-formed (sizes, one player on floor, boxes on floor, boxes = targets). */
export function checkLevel(level: SokobanLevel, where = 'sokoban level'): void {
  const n = level.width * level.height;
  const fail = (expected: string, received: string): never => {
    throw new EnvError('invalid Sokoban level', { where, expected, received });
  };
  if (!Number.isInteger(level.width) || !Number.isInteger(level.height) || level.width < 3 || level.height < 3) {
    fail('width and height >= 3', `${level.width}x${level.height}`);
  }
  if (level.walls.length !== n || level.targets.length !== n) fail(`walls and targets of length ${n}`, `${level.walls.length} and ${level.targets.length}`);
  if (!(level.player >= 0 && level.player < n) || level.walls[level.player]) fail('exactly one player on a floor cell', `player at cell ${level.player}`);
  const seen = new Set<number>();
  for (const b of level.boxes) {
    if (!(b >= 0 && b < n) || level.walls[b] || seen.has(b) || b === level.player) fail('boxes on distinct free floor cells', `box at cell ${b}`);
    seen.add(b);
  }
  const numTargets = level.targets.filter(Boolean).length;
  if (level.boxes.length === 0) fail('at least one box', '0 boxes');
  if (numTargets !== level.boxes.length) fail('as many targets as boxes', `${numTargets} targets and ${level.boxes.length} boxes`);
}

type LevelSymbols = { [K in keyof typeof SOKOBAN_SYMBOLS]: string };

/** XSB characters for the same cell kinds. */
const XSB_SYMBOLS: LevelSymbols = { wall: '#', floor: ' ', target: '.', box: '$', boxOnTarget: '*', player: '@', playerOnTarget: '+' };

/** One line of text per row, one symbol per cell. */
function levelRows(level: SokobanLevel, symbols: LevelSymbols): string[] {
  const boxes = new Set(level.boxes);
  const lines: string[] = [];
  for (let r = 0; r < level.height; r++) {
    let line = '';
    for (let c = 0; c < level.width; c++) {
      const i = r * level.width + c;
      if (level.walls[i]) line += symbols.wall;
      else if (i === level.player) line += level.targets[i] ? symbols.playerOnTarget : symbols.player;
      else if (boxes.has(i)) line += level.targets[i] ? symbols.boxOnTarget : symbols.box;
      else line += level.targets[i] ? symbols.target : symbols.floor;
    }
    lines.push(line);
  }
  return lines;
}

/** The SPA/RAGEN symbol grid: `#` wall, `_` floor, `O` target, `X` box, `√` box on target, `P` player, `S` player on target. */
export function levelToGrid(level: SokobanLevel): string {
  return levelRows(level, SOKOBAN_SYMBOLS).join('\n');
}

/** Export a level as standard XSB text (`#` wall, `@` player, `+` player on goal, `$` box, `*` box on goal, `.` goal, space floor). */
export function levelToXsb(level: SokobanLevel): string {
  return levelRows(level, XSB_SYMBOLS).map((line) => line.replace(/\s+$/, '')).join('\n');
}

/** Split an XSB collection into level blocks (comment lines start with `;`, levels are separated by blank or text lines). */
export function splitXsbCollection(text: string, where = 'XSB text'): { title: string | null; lines: string[]; firstLine: number }[] {
  const out: { title: string | null; lines: string[]; firstLine: number }[] = [];
  let current: string[] = [];
  let firstLine = 0;
  let title: string | null = null;
  let pendingTitle: string | null = null;
  const isBoardLine = (line: string) => line.trim().length > 0 && /^[ \t#@+$*._-]+$/.test(line) && line.includes('#');
  const flush = () => {
    if (current.length > 0) out.push({ title, lines: current, firstLine });
    current = [];
    title = null;
  };
  const rows = text.split(/\r?\n/).map((raw) => raw.replace(/\t/g, '    '));
  rows.forEach((line, k) => {
    // A wall row with a stray character (e.g. `#  X  #`) next to board lines is a typo, not a
    // title: splitting the level there would silently play a truncated board.
    if (!isBoardLine(line) && line.trim().startsWith('#') && (isBoardLine(rows[k - 1] ?? '') || isBoardLine(rows[k + 1] ?? ''))) {
      const c = [...line].findIndex((ch) => !/[ \t#@+$*._-]/.test(ch));
      throw new EnvError('unexpected character', {
        where: `${where} line ${k + 1} column ${c + 1}`, expected: 'one of # @ + $ * . space - _ in a board line', received: show([...line][c]),
        hint: 'XSB boards use # wall, @ player, + player on goal, $ box, * box on goal, . goal, space floor',
      });
    }
    if (isBoardLine(line)) {
      if (current.length === 0) { title = pendingTitle; firstLine = k; }
      current.push(line);
    } else {
      flush();
      const trimmed = line.trim();
      if (trimmed.startsWith(';')) pendingTitle = trimmed.replace(/^;\s*/, '') || pendingTitle;
      else if (trimmed.length > 0 && !/^[A-Za-z]+:/.test(trimmed)) pendingTitle = trimmed;
    }
  });
  flush();
  return out;
}

/**
 * Parse one XSB level (the first one if the text holds a collection; `index` picks another).
 * Cells outside the walls (not reachable from the player without crossing a wall) become walls.
 */
export function parseXsb(text: string, index = 0, where = 'XSB level'): SokobanLevel {
  const levels = splitXsbCollection(text, where);
  if (levels.length === 0) {
    throw new EnvError('no level found', {
      where, expected: 'XSB board lines made of # @ + $ * . and spaces', received: show(text),
      hint: 'pass a standard XSB level (one per block, `;` comment lines allowed)',
    });
  }
  if (index < 0 || index >= levels.length) {
    throw new EnvError('level index out of range', { where, expected: `0..${levels.length - 1}`, received: String(index) });
  }
  const lines = levels[index].lines;
  const lineNo = (r: number) => levels[index].firstLine + r + 1;   // line number in the whole text
  const height = lines.length;
  const width = Math.max(...lines.map((l) => l.length));
  const n = width * height;
  const walls = new Array<boolean>(n).fill(false);
  const targets = new Array<boolean>(n).fill(false);
  const boxes: number[] = [];
  const players: number[] = [];
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      const ch = lines[r][c] ?? ' ';
      const i = r * width + c;
      switch (ch) {
        case '#': walls[i] = true; break;
        case '@': players.push(i); break;
        case '+': players.push(i); targets[i] = true; break;
        case '$': boxes.push(i); break;
        case '*': boxes.push(i); targets[i] = true; break;
        case '.': targets[i] = true; break;
        case ' ': case '-': case '_': break;
        default:
          throw new EnvError('unexpected character', {
            where: `${where} line ${lineNo(r)} column ${c + 1}`,
            expected: 'one of # @ + $ * . space - _',
            received: show(ch),
          });
      }
    }
  }
  if (players.length !== 1) {
    const at = players.map((i) => `line ${lineNo(Math.floor(i / width))} column ${(i % width) + 1}`).join(', ');
    throw new EnvError('wrong number of players', { where, expected: 'exactly one @ or +', received: `${players.length}${at ? ` (at ${at})` : ''}` });
  }
  // Cells not reachable from the player without crossing walls lie outside the level: make them walls.
  const inside = new Array<boolean>(n).fill(false);
  const stack = [players[0]];
  inside[players[0]] = true;
  while (stack.length > 0) {
    const i = stack.pop()!;
    const r = Math.floor(i / width);
    const c = i % width;
    for (const [dr, dc] of [[-1, 0], [1, 0], [0, -1], [0, 1]]) {
      const rr = r + dr;
      const cc = c + dc;
      if (rr < 0 || rr >= height || cc < 0 || cc >= width) continue;
      const j = rr * width + cc;
      if (!inside[j] && !walls[j]) { inside[j] = true; stack.push(j); }
    }
  }
  // The player's area must be closed by walls: a floor cell on the border (or a row too short to
  // reach the right wall) means the player could walk off the board.
  for (let i = 0; i < n; i++) {
    if (!inside[i]) continue;
    const r = Math.floor(i / width);
    const c = i % width;
    if (r === 0 || r === height - 1 || c === 0 || c === width - 1) {
      throw new EnvError('level is not closed', {
        where: `${where} line ${lineNo(r)} column ${c + 1}`, expected: 'walls (#) all around the area the player can reach',
        received: c >= lines[r].length ? `line ${lineNo(r)} ends at column ${lines[r].length}, leaving a gap` : 'a floor cell on the edge of the board',
        hint: 'close the outer wall; rows of different lengths are fine as long as the walls enclose the player',
      });
    }
  }
  for (let i = 0; i < n; i++) {
    if (!inside[i] && !walls[i]) {
      if (targets[i] || boxes.includes(i)) {
        throw new EnvError('box or goal outside the walls', {
          where: `${where} line ${lineNo(Math.floor(i / width))} column ${(i % width) + 1}`,
          expected: 'boxes and goals inside the area the player can reach',
          received: 'a box or goal cut off by walls',
        });
      }
      walls[i] = true;
    }
  }
  const level: SokobanLevel = { width, height, walls, targets, boxes: boxes.sort((a, b) => a - b), player: players[0] };
  checkLevel(level, where);
  return level;
}

/** Parse a level from the SPA symbol grid (`#_OX√PS`, one row per line). */
export function parseSokobanGrid(text: string, where = 'Sokoban grid'): SokobanLevel {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  const height = lines.length;
  const width = lines.length > 0 ? [...lines[0]].length : 0;
  const n = width * height;
  const walls = new Array<boolean>(n).fill(false);
  const targets = new Array<boolean>(n).fill(false);
  const boxes: number[] = [];
  let player = -1;
  lines.forEach((line, r) => {
    const chars = [...line];
    if (chars.length !== width)
      throw new EnvError('ragged grid', { where: `${where} row ${r + 1}`, expected: `${width} symbols`, received: `${chars.length}` });
    chars.forEach((ch, c) => {
      const i = r * width + c;
      switch (ch) {
        case '#': walls[i] = true; break;
        case '_': break;
        case 'O': targets[i] = true; break;
        case 'X': boxes.push(i); break;
        case '√': boxes.push(i); targets[i] = true; break;
        case 'P': player = i; break;
        case 'S': player = i; targets[i] = true; break;
        default:
          throw new EnvError('unexpected symbol', { where: `${where} row ${r + 1} column ${c + 1}`, expected: 'one of # _ O X √ P S', received: show(ch) });
      }
    });
  });
  const level: SokobanLevel = { width, height, walls, targets, boxes, player };
  checkLevel(level, where);
  return level;
}
