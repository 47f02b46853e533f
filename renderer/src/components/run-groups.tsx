// Runs grouped by study, method, env, preset, tag or a config value, with mean ± sd of the key
// metrics over the runs in each group that have them (n says how many). A run with several tags
// counts in each of its tags' groups.
import { metricMeaning } from './metric-glossary.js';
import { nameOf } from './metric-names.js';
import type { ReactElement } from 'react';
import type { RunSummary } from '../../../core/api/contract.js';
import { keyMetrics } from './key-metrics.js';

export type GroupBy = 'none' | 'study' | 'method' | 'env' | 'preset' | 'tag' | `param:${string}`;

export interface Stat { mean: number; sd: number; n: number }
export interface RunGroup { key: string; runIds: string[]; success: Stat | null; passAt1: Stat | null; wmExact: Stat | null; passAtK: Record<number, Stat> }

/** Mean and sample standard deviation (0 for one value); null when there are no values. */
export function meanSd(values: number[]): Stat | null {
  const xs = values.filter((v) => Number.isFinite(v));
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, sd, n: xs.length };
}

/** The study a run belongs to (study runs are named "study:<name>:<method>:<env>:<seed>"). */
export function studyOf(r: Pick<RunSummary, 'name'>): string | null {
  const m = /^study:([^:]+):/.exec(r.name);
  return m ? m[1]! : null;
}

function keysOf(r: RunSummary, by: GroupBy): string[] {
  switch (by) {
    case 'none': return ['all runs'];
    case 'study': return [studyOf(r) ?? '(not in a study)'];
    case 'method': return [r.method];
    case 'env': return [r.env];
    case 'preset': return [r.preset ?? '(no preset)'];
    case 'tag': return r.tags?.length ? r.tags : ['(untagged)'];
    default: {
      const path = by.slice('param:'.length);
      const v = r.params?.[path];
      return [v === undefined ? '(default)' : String(v)];
    }
  }
}

/** Pass@k per k of a run: eval/passAt<k>, else rl/passAt<k> (k ≥ 2). */
export function passAtKs(latest: Record<string, number>): Record<number, number> {
  const out: Record<number, number> = {};
  for (const prefix of ['rl', 'eval']) {                      // eval wins: written last
    for (const [name, v] of Object.entries(latest)) {
      const m = new RegExp(`^${prefix}/passAt(\\d+)$`).exec(name);
      if (m && Number(m[1]) > 1 && Number.isFinite(v)) out[Number(m[1])] = v;
    }
  }
  return out;
}

export function groupRuns(runs: RunSummary[], by: GroupBy): RunGroup[] {
  const groups = new Map<string, RunSummary[]>();
  for (const r of runs) for (const k of keysOf(r, by)) { const g = groups.get(k) ?? []; g.push(r); groups.set(k, g); }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, rs]) => {
    const km = rs.map((r) => keyMetrics(r.latest));
    const ks = [...new Set(rs.flatMap((r) => Object.keys(passAtKs(r.latest)).map(Number)))].sort((a, b) => a - b);
    const passAtK: Record<number, Stat> = {};
    for (const k of ks) { const s = meanSd(rs.map((r) => passAtKs(r.latest)[k]).filter((v): v is number => v !== undefined)); if (s) passAtK[k] = s; }
    return {
      key, runIds: rs.map((r) => r.id),
      success: meanSd(km.map((m) => m.success).filter((v): v is number => v !== null)),
      passAt1: meanSd(km.map((m) => m.passAt1).filter((v): v is number => v !== null)),
      wmExact: meanSd(km.filter((m) => m.wmTurns !== 0).map((m) => m.wmExact).filter((v): v is number => v !== null)),
      passAtK,
    };
  });
}

export function fmtStat(s: Stat | null | undefined): string {
  if (!s) return '–';
  const pct = (v: number) => (v * 100).toFixed(1);
  return s.n > 1 ? `${pct(s.mean)} ± ${pct(s.sd)}% (n=${s.n})` : `${pct(s.mean)}% (n=1)`;
}

export function RunGroupsTable({ groups, onOpen }: { groups: RunGroup[]; onOpen: (runIds: string[]) => void }): ReactElement {
  const ks = [...new Set(groups.flatMap((g) => Object.keys(g.passAtK).map(Number)))].sort((a, b) => a - b);
  return (
    <table className="plain run-groups" data-testid="run-groups">
      <thead><tr><th>group</th><th>runs</th><th>success</th><th>Pass@1</th>{ks.map((k) => <th key={k}>Pass@{k}</th>)}<th title={metricMeaning('eval/wmPredictionExact') ?? undefined}>{nameOf('eval/wmPredictionExact')}</th><th /></tr></thead>
      <tbody>
        {groups.map((g) => (
          <tr key={g.key} data-testid="run-group">
            <td>{g.key}</td><td className="num">{g.runIds.length}</td>
            <td className="num">{fmtStat(g.success)}</td><td className="num">{fmtStat(g.passAt1)}</td>
            {ks.map((k) => <td key={k} className="num">{fmtStat(g.passAtK[k])}</td>)}
            <td className="num">{fmtStat(g.wmExact)}</td>
            <td><a onClick={() => onOpen(g.runIds)} title="Compare the runs of this group">compare</a></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
