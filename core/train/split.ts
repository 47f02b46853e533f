// Train/validation split by whole game: every row of one game lands on the same side, so no game
// leaks into both (the released pipeline split per turn).
import { createRng, shuffleInPlace } from '../util/rng.js';

export function splitByGame<T>(
  rows: T[],
  gameOf: (row: T) => string,
  valFraction: number,
  seed: number,
): { train: T[]; val: T[]; trainGames: string[]; valGames: string[] } {
  if (!(valFraction >= 0 && valFraction < 1)) throw new Error(`splitByGame: expected valFraction in [0, 1); received ${valFraction}`);
  const games = [...new Set(rows.map(gameOf))].sort();
  shuffleInPlace(games, createRng(seed));
  // at least one validation game when there are two or more games and valFraction > 0
  let valCount = Math.round(games.length * valFraction);
  if (valFraction > 0 && games.length >= 2 && valCount === 0) valCount = 1;
  if (valCount >= games.length) valCount = games.length - 1;
  const valGames = new Set(games.slice(0, Math.max(0, valCount)));
  const train: T[] = [], val: T[] = [];
  for (const row of rows) (valGames.has(gameOf(row)) ? val : train).push(row);
  return { train, val, trainGames: games.filter((g) => !valGames.has(g)).sort(), valGames: [...valGames].sort() };
}
