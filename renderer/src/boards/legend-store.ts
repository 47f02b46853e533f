// The board legends the envs serve (envs.list: each env's cell kinds with symbol, label and glyph layers), kept once per page.
// Boards of an env whose legend is here are drawn from it (board-shapes.ts cellShapes), so a new env needs no renderer change.
// Loaded by loadLegends(client) at start; Board and BoardLegend re-render when it arrives (useLegends).
import { useSyncExternalStore } from 'react';
import type { CellLegend, WorkbenchClient } from '../../../core/api/contract.js';

const legends = new Map<string, CellLegend[]>();
const listeners = new Set<() => void>();
let version = 0;

/** Register the legends of some envs (replacing earlier ones of the same id). */
export function registerLegends(envs: ReadonlyArray<{ id: string; cells: CellLegend[] }>): void {
  for (const env of envs) legends.set(env.id.toLowerCase(), env.cells);
  version++;
  for (const listener of listeners) listener();
}

/** The legend of an env id, or undefined when the env did not serve one (yet). */
export function legendFor(envId: string): CellLegend[] | undefined {
  return legends.get(envId.toLowerCase());
}

/** One cell kind's legend entry for an env, or undefined. */
export function legendEntry(envId: string, kind: string): CellLegend | undefined {
  return legendFor(envId)?.find((c) => c.kind === kind);
}

/** Re-render when legends arrive. Returns a number that changes with each registration. */
export function useLegends(): number {
  return useSyncExternalStore(
    (listener) => { listeners.add(listener); return () => { listeners.delete(listener); }; },
    () => version,
    () => version,
  );
}

/**
 * Fetch every registered env's legend (envs.list), now and again on each reconnection until it has arrived. A failure leaves the
 * built-in drawings in place and is reported on the console.
 */
export function loadLegends(client: Pick<WorkbenchClient, 'envs'> & { onConnection?(listener: (state: string) => void): () => void }): void {
  let loaded = false;
  const load = () => client.envs.list({}).then(
    (r) => { loaded = true; registerLegends(r.envs); },
    (error: Error) => console.warn(`board legends not loaded yet (envs.list: ${error.message}); boards use the built-in glyphs`),
  );
  void load();
  client.onConnection?.((state) => { if (state === 'open' && !loaded) void load(); });
}
