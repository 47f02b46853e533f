// Issue 21 item 2/5: a recorder file written from RAGEN's real EnvStateManager (RAGEN @5eb79b8 ragen/llm_agent/es_manager.py
// over gym-sokoban and gymnasium, the bundle's workbench_env.py registered, integer action ids as es_manager.py:153,257-267 log
// them) imports turn by turn. The fixture is made by tests/fixtures/interop/make_ragen_rollouts.py (its docstring says how).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importRagenRun } from '../../core/interop/import-run.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/interop/ragen-val_step0.jsonl', import.meta.url));
// ragen/env/sokoban/config.py:11 and ragen/env/frozen_lake/config.py:22 @5eb79b8
const LOOKUP: Record<string, Record<number, string>> = {
  workbench_sokoban: { 1: 'Up', 2: 'Down', 3: 'Left', 4: 'Right' },
  workbench_frozen_lake: { 1: 'Left', 2: 'Down', 3: 'Right', 4: 'Up' },
};
const MOVE: Record<string, [number, number]> = { Up: [-1, 0], Down: [1, 0], Left: [0, -1], Right: [0, 1] };
const player = (text: string) => { const m = /Player \(P\) is at \((\d+),(\d+)\)/.exec(text)!; return [Number(m[1]), Number(m[2])]; };

type Rec = { tag: string; env_type: string; seed: number; history: { state: string; actions?: number[]; reward?: number;
  info?: { action_is_effective: boolean } }[] };
let tmp: string;
let records: Rec[];
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ragen-rollouts-'));
  records = fs.readFileSync(FIXTURE, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('recorder output of RAGEN 5eb79b8\'s EnvStateManager (integer actions) imports', () => {
  it('the fixture is what RAGEN logs: integer action ids, both workbench envs, val seeds 123/124 per group', () => {
    expect(records.map((r) => r.env_type).sort()).toEqual(['workbench_frozen_lake', 'workbench_frozen_lake', 'workbench_sokoban', 'workbench_sokoban']);
    expect(records.map((r) => r.seed).sort()).toEqual([123, 123, 124, 124]);
    for (const r of records) for (const h of r.history.slice(0, -1)) for (const a of h.actions!) expect(Number.isInteger(a)).toBe(true);
  });

  it('every turn comes back with the executed ids named by RAGEN\'s lookup; Sokoban moves the player the named way', async () => {
    const src = path.join(tmp, 'outputs', 'workbench_rollouts');
    fs.mkdirSync(src, { recursive: true });
    fs.copyFileSync(FIXTURE, path.join(src, 'val_step0.jsonl'));
    const r = await importRagenRun({ source: path.join(tmp, 'outputs'), projectDir: path.join(tmp, 'project'), now: 1 });
    expect(Object.fromEntries(r.sources.map((s) => [s.kind, s.count]))).toMatchObject({ recorder: 4 });
    const eps = fs.readFileSync(path.join(tmp, 'project', 'runs', r.runId, 'rollouts', 'imported.jsonl'), 'utf8').trim().split('\n')
      .map((l) => JSON.parse(l)) as { env: string; seed: number; turns: { actionsExecuted: string[]; reward: number; stateBefore: { text: string };
        stateAfter: { text: string } }[] }[];
    expect(eps.length).toBe(4);
    let checkedMoves = 0;
    records.forEach((rec, i) => {
      const ep = eps[i]!;
      expect(ep.env).toBe(rec.env_type === 'workbench_sokoban' ? 'sokoban' : 'frozenlake');
      expect(ep.seed).toBe(rec.seed);
      const turns = rec.history.slice(0, -1);
      expect(ep.turns.length).toBe(turns.length);
      turns.forEach((h, k) => {
        const t = ep.turns[k]!;
        expect(t.actionsExecuted).toEqual(h.actions!.map((a) => LOOKUP[rec.env_type]![a]));
        expect(t.reward).toBeCloseTo(h.reward!, 9);
        expect(t.stateBefore.text).toBe(h.state);
        expect(t.stateAfter.text).toBe(rec.history[k + 1]!.state);
        if (rec.env_type === 'workbench_sokoban' && h.actions!.length === 1 && h.info!.action_is_effective) {
          const [r0, c0] = player(h.state), [r1, c1] = player(rec.history[k + 1]!.state);
          expect([r1! - r0!, c1! - c0!]).toEqual(MOVE[t.actionsExecuted[0]!]);
          checkedMoves++;
        }
      });
    });
    expect(checkedMoves).toBeGreaterThan(0);
  });
});
