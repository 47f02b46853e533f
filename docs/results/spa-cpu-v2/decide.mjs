#!/usr/bin/env node
// DESIGN.md's decision rule, applied mechanically to one lake's records: criterion 1 from DIR/criterion1.md (criterion1.mjs's
// verdict line), criteria 2 and 3 from DIR/study.json (written by `study table --out DIR`). Prints the rule applied, in
// markdown, with every number it used; nothing is decided while a cell is missing.
//
//   node docs/results/spa-cpu-v2/decide.mjs docs/results/spa-cpu-v2/fldet [--seeds 3] > docs/results/spa-cpu-v2/fldet/decision.md
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ARMS = ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans'];

/** The rule over a study table (study.json's `table`) and criterion 1's verdict ('met' | 'not met' | 'pending'). */
export function decide(table, criterion1, seeds = 3) {
  const out = [];
  const pts = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const cell = (m) => table.cells.find((c) => c.method === m);
  const missing = ARMS.filter((m) => (cell(m)?.completed ?? 0) < seeds);
  if (missing.length) return { verdict: 'pending', text: `**Not decided:** fewer than ${seeds} finished seeds for ${missing.join(', ')}.` };
  if (criterion1 === 'pending') return { verdict: 'pending', text: '**Not decided:** criterion 1 is not in yet (wm-checks.sh, then criterion1.mjs).' };
  const chanceRef = table.references.find((r) => r.kind === 'chance');
  if (!chanceRef) throw new Error('study.json has no chance row (table.references[kind = chance])');
  const chance = chanceRef.perPuzzle.reduce((a, c) => a + c, 0) / chanceRef.perPuzzle.length;

  out.push(`Criterion 1 (world model learned, criterion1.md): **${criterion1}**.`, '');
  out.push(`Criterion 2 (RL learns at all?): chance row ${pct(chance)} Pass@1 on the same puzzles.`, '', '| arm | Pass@1 (95%) | reading |', '|---|---|---|');
  const reading = {};
  for (const m of ARMS) {
    const p = cell(m).passAt['1'];
    reading[m] = p.low <= chance && chance <= p.high ? 'indistinguishable from chance' : p.low > chance ? 'above chance' : 'below chance';
    out.push(`| ${m} | ${pct(p.mean)} [${pct(p.low)}, ${pct(p.high)}] | ${reading[m]} |`);
  }
  const uninformative = reading['vanilla-rl'] === 'indistinguishable from chance' && reading['state-estimation-rl'] === 'indistinguishable from chance';
  const learns = !uninformative;
  out.push('', uninformative ? '**Criterion 2: vanilla RL and state-estimation RL are both indistinguishable from chance: criterion 3 is uninformative.**'
    : '**Criterion 2 met** (vanilla RL and state-estimation RL are not both indistinguishable from chance; an arm below chance counts as distinguishable, as written).', '');

  const diff = (a, b) => {
    const d = table.differences.find((x) => x.k === 1 && x.a === a && x.b === b);
    if (d) return d.diff;
    const r = table.differences.find((x) => x.k === 1 && x.a === b && x.b === a);
    if (!r) throw new Error(`study.json has no Pass@1 difference between ${a} and ${b}`);
    return { mean: -r.diff.mean, low: -r.diff.high, high: -r.diff.low };
  };
  const vsSe = diff('spa', 'state-estimation-rl'), vsMask = diff('spa', 'spa-mask-state-spans');
  const show = (d) => `${pts(d.mean)} points [${pts(d.low)}, ${pts(d.high)}]`;
  out.push('Criterion 3 (effect on RL, final Pass@1, paired per run seed and puzzle):', '',
    `- SPA − state estimation: ${show(vsSe)} (evidence needs ≥ +10 with the interval above 0)`,
    `- SPA − SPA-masked: ${show(vsMask)} (evidence needs ≥ +5 with the interval above 0; refutation |d| ≤ 3 with the interval within ±7)`, '');
  let verdict;
  if (vsSe.mean >= 0.10 && vsSe.low > 0 && vsMask.mean >= 0.05 && vsMask.low > 0) verdict = 'evidence for SPA';
  else if (criterion1 === 'met' && learns && Math.abs(vsMask.mean) <= 0.03 && vsMask.low >= -0.07 && vsMask.high <= 0.07) verdict = 'refutation at this scale';
  else verdict = 'no decision';
  const why = verdict === 'no decision' ? ' (neither the evidence nor the refutation condition holds: the numbers are reported)' : '';
  out.push(`**Decision: ${verdict}${why}.**${uninformative ? ' Criterion 3 is read as uninformative (criterion 2).' : ''}`);
  if (criterion1 === 'not met') out.push('', '**The study is inconclusive about SPA on this lake (criterion 1 not met).**');
  // Amendment 2026-11-29 (issue 34; a reading note, the rule's verdict above is unchanged): a gap that comes from a
  // comparison arm falling below chance is that arm's collapse, not a gain of SPA's.
  const below = ['state-estimation-rl', 'spa-mask-state-spans'].filter((m) => reading[m] === 'below chance');
  if (below.length && reading.spa !== 'above chance') {
    out.push('', `**Reading (amendment 2026-11-29; the verdict above is the rule's, unchanged):** SPA is ${reading.spa}, and the gap in its favour comes from ${below.join(' and ')} falling below chance. An arm below chance is read as what it is, not as a gain of SPA's: this lake does not show that SPA helps RL beat chance.`);
  }
  return { verdict, text: out.join('\n') };
}

/** criterion1.md's verdict line. */
export function criterion1Verdict(markdown) {
  if (/\*\*Criterion 1 met:/.test(markdown)) return 'met';
  if (/\*\*Criterion 1 not met:/.test(markdown)) return 'not met';
  return 'pending';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) { console.error('usage: decide.mjs RECORDS_DIR [--seeds 3]'); process.exit(2); }
  const at = process.argv.indexOf('--seeds');
  const seeds = at > 0 ? Number(process.argv[at + 1]) : 3;
  for (const f of ['study.json', 'criterion1.md']) {
    if (!existsSync(join(dir, f))) { console.error(`decide.mjs: ${join(dir, f)} is missing (study table --out ${dir}; criterion1.mjs ${dir})`); process.exit(2); }
  }
  const study = JSON.parse(readFileSync(join(dir, 'study.json'), 'utf8'));
  const c1 = criterion1Verdict(readFileSync(join(dir, 'criterion1.md'), 'utf8'));
  console.log(`# Decision rule applied, ${dir}\n\n${decide(study.table, c1, seeds).text}`);
}
