#!/usr/bin/env node
// DESIGN.md's decision rule (fixed before any run), applied mechanically to one lake of study v3:
// criterion 1 (the gate) from DIR/wm-check/<arm>-s<seed>-sft.json (written by run.sh: `probe --check` on the cell's SFT
// checkpoint), criteria 2-3 from DIR/study.json (written by `study table --out DIR`), the format errors of criterion 4 from
// DIR/runs/*.json. Prints the rule applied, in markdown, with every number it used; nothing is decided while a cell or a
// world-model check is missing.
//
//   node bin/spa-workbench.mjs study table --records docs/results/study-v3/fldet --name study-v3-fldet \
//     --methods vanilla-rl,state-estimation-rl,spa,spa-mask-state-spans --out docs/results/study-v3/fldet
//   node docs/results/study-v3/decide.mjs docs/results/study-v3/fldet > docs/results/study-v3/fldet/decision.md
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const ARMS = ['vanilla-rl', 'state-estimation-rl', 'spa', 'spa-mask-state-spans'];
const SEEDS = [0, 1, 2];
/** Criterion 1's thresholds per lake (DESIGN.md): prediction given the action on state-changing turns, SPA after SFT. */
export const GATE = { fldet: { givenAction: 0.6, observation: 0.9, maskedMax: 0.3 }, fl08: { givenAction: 0.5, observation: 0.9, maskedMax: 0.3 } };

const pts = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Criterion 1 over the world-model checks after SFT.
 * @param checks {spa: [check per seed], 'spa-mask-state-spans': [...]}, each `probe --check --out` JSON (versusBase.model /
 *   .base, `.conditioned.exactChanged` = prediction given the action on state-changing turns) or undefined when missing
 * @param lake 'fldet' | 'fl08'
 * @returns {verdict: 'met' | 'not met' | 'pending', text}
 */
export function gate(checks, lake) {
  const g = GATE[lake];
  if (!g) throw new Error(`unknown lake ${lake} (fldet or fl08)`);
  const missing = [];
  for (const arm of ['spa', 'spa-mask-state-spans']) SEEDS.forEach((s, i) => { if (!checks[arm]?.[i]) missing.push(`${arm} seed ${s}`); });
  if (missing.length) return { verdict: 'pending', text: `**Criterion 1 not decided:** no world-model check after SFT for ${missing.join(', ')}.` };
  const row = (c) => ({ given: c.versusBase.model.conditioned.exactChanged, obs: c.versusBase.model.observationExact,
    turns: c.versusBase.model.conditioned.changedTurns, baseGiven: c.versusBase.base.conditioned.exactChanged, baseObs: c.versusBase.base.observationExact });
  const spa = checks.spa.map(row), masked = checks['spa-mask-state-spans'].map(row);
  const spaGiven = mean(spa.map((r) => r.given)), spaObs = mean(spa.map((r) => r.obs)), maskedGiven = mean(masked.map((r) => r.given));
  const baseGiven = mean(spa.map((r) => r.baseGiven));
  const out = ['Criterion 1 (world model learned; SPA after SFT, mean of 3 seeds; the eval\'s first turns of 64 puzzles):', '',
    '| after SFT | seed 0 | seed 1 | seed 2 | mean | needs |', '|---|---|---|---|---|---|',
    `| SPA: prediction given the action (changed turns) | ${spa.map((r) => `${pct(r.given)} (${r.turns})`).join(' | ')} | **${pct(spaGiven)}** | ≥ ${pct(g.givenAction)} |`,
    `| SPA: observation exact | ${spa.map((r) => pct(r.obs)).join(' | ')} | **${pct(spaObs)}** | ≥ ${pct(g.observation)} |`,
    `| SPA-masked: prediction given the action | ${masked.map((r) => pct(r.given)).join(' | ')} | **${pct(maskedGiven)}** | ≤ ${pct(g.maskedMax)} |`,
    `| shipped base: prediction given the action | ${spa.map((r) => pct(r.baseGiven)).join(' | ')} | **${pct(baseGiven)}** | ≤ ${pct(g.maskedMax)} |`,
    `| shipped base: observation exact | ${spa.map((r) => pct(r.baseObs)).join(' | ')} | ${pct(mean(spa.map((r) => r.baseObs)))} | – |`, ''];
  const fails = [];
  if (!(spaGiven >= g.givenAction)) fails.push(`SPA's prediction given the action ${pct(spaGiven)} < ${pct(g.givenAction)}`);
  if (!(spaObs >= g.observation)) fails.push(`SPA's observation exact ${pct(spaObs)} < ${pct(g.observation)}`);
  if (!(maskedGiven <= g.maskedMax)) fails.push(`SPA-masked's prediction given the action ${pct(maskedGiven)} > ${pct(g.maskedMax)}`);
  if (!(baseGiven <= g.maskedMax)) fails.push(`the base's prediction given the action ${pct(baseGiven)} > ${pct(g.maskedMax)}`);
  const verdict = fails.length ? 'not met' : 'met';
  out.push(fails.length ? `**Criterion 1 not met:** ${fails.join('; ')}.` : '**Criterion 1 met.**');
  return { verdict, text: out.join('\n') };
}

/** The difference a − b at Pass@k from study.json's table (either stored orientation). */
function diff(table, a, b, k = 1) {
  const d = table.differences.find((x) => x.k === k && x.a === a && x.b === b);
  if (d) return d.diff;
  const r = table.differences.find((x) => x.k === k && x.a === b && x.b === a);
  if (!r) throw new Error(`study.json has no Pass@${k} difference between ${a} and ${b}`);
  return { mean: -r.diff.mean, low: -r.diff.high, high: -r.diff.low };
}

/**
 * Criteria 2 and 3 (and 4's numbers) over a study table (study.json's `table`), given criterion 1's verdict.
 * @param formatErrors optional {arm: mean eval format-error rate}
 * @returns {verdict: 'pending' | 'inconclusive about SPA' | 'evidence for SPA' | 'evidence against a world-model effect at this scale' | 'uninformative' | 'no decision', text}
 */
export function decide(table, criterion1, formatErrors = {}) {
  const cell = (m) => table.cells.find((c) => c.method === m);
  const missing = ARMS.filter((m) => (cell(m)?.completed ?? 0) < SEEDS.length);
  if (missing.length) return { verdict: 'pending', text: `**Not decided:** fewer than ${SEEDS.length} finished seeds for ${missing.join(', ')}.` };
  if (criterion1 === 'pending') return { verdict: 'pending', text: '**Not decided:** criterion 1 is not in yet (a world-model check after SFT is missing).' };
  const chanceRef = table.references.find((r) => r.kind === 'chance');
  if (!chanceRef) throw new Error('study.json has no chance row (table.references[kind = chance])');
  const chance = mean(chanceRef.perPuzzle);
  const oracle = table.references.find((r) => r.kind === 'oracle');
  const out = [`Criterion 2 (RL learns): final Pass@1 (${SEEDS.length} seeds x ${cell('spa').puzzles ?? '?'} puzzles) against the chance row ` +
    `${pct(chance)}${oracle ? ` (oracle ${pct(mean(oracle.perPuzzle))})` : ''} on the same puzzles.`, '',
    '| arm | Pass@1 [95%] | Pass@8 − Pass@1 | format errors | reading |', '|---|---|---|---|---|'];
  const reading = {};
  for (const m of ARMS) {
    const p = cell(m).passAt['1'], p8 = cell(m).passAt['8'];
    reading[m] = p.low > chance ? 'above chance' : p.high < chance ? 'below chance' : 'at chance';
    const fe = formatErrors[m] === undefined ? '–' : pct(formatErrors[m]);
    out.push(`| ${m} | ${pct(p.mean)} [${pct(p.low)}, ${pct(p.high)}] | ${p8 ? pts(p8.mean - p.mean) : '–'} | ${fe} | ${reading[m]} |`);
  }
  const vsSe = diff(table, 'spa', 'state-estimation-rl'), vsMask = diff(table, 'spa', 'spa-mask-state-spans'), vsVanilla = diff(table, 'spa', 'vanilla-rl');
  const show = (d) => `${pts(d.mean)} points [${pts(d.low)}, ${pts(d.high)}]`;
  out.push('', 'Criterion 3 (effect on RL; final Pass@1, paired per (run seed, puzzle)):', '',
    `- SPA − state-estimation RL: ${show(vsSe)} (evidence for SPA needs ≥ +10 with the interval above 0)`,
    `- SPA − SPA-masked: ${show(vsMask)} (evidence for SPA needs ≥ +5 with the interval above 0; against a world-model effect: the interval entirely below +5)`,
    `- SPA above chance: ${reading.spa === 'above chance' ? 'yes' : `no (${reading.spa})`}`,
    `- Criterion 4, no decision attached: SPA − vanilla RL ${show(vsVanilla)}`, '');
  let verdict;
  if (criterion1 !== 'met') verdict = 'inconclusive about SPA';
  else if (vsSe.mean >= 0.10 && vsSe.low > 0 && vsMask.mean >= 0.05 && vsMask.low > 0 && reading.spa === 'above chance') verdict = 'evidence for SPA';
  else if (vsMask.high < 0.05 && (reading.spa === 'above chance' || reading['spa-mask-state-spans'] === 'above chance')) {
    verdict = 'evidence against a world-model effect at this scale';
  } else if (!['state-estimation-rl', 'spa', 'spa-mask-state-spans'].some((m) => reading[m] === 'above chance')) verdict = 'uninformative';
  else verdict = 'no decision';
  const why = {
    'inconclusive about SPA': 'criterion 1 is not met, so SPA did not get its world model and criterion 3 is not read; the RL numbers above are reported',
    uninformative: 'none of state-estimation RL, SPA and SPA-masked is above chance: RL learned nothing in the world-model format',
    'no decision': 'neither the evidence for SPA, the evidence against, nor the uninformative condition holds: the numbers are reported',
  }[verdict];
  out.push(`**Decision: ${verdict}**${why ? ` (${why})` : ''}.`);
  const below = ['state-estimation-rl', 'spa-mask-state-spans'].filter((m) => reading[m] === 'below chance');
  if (below.length && reading.spa !== 'above chance') {
    out.push('', `A gap in SPA's favour over ${below.join(' and ')} comes from ${below.length > 1 ? 'arms' : 'an arm'} below chance (format collapse) and is not read as evidence (DESIGN.md).`);
  }
  return { verdict, text: out.join('\n') };
}

/** The world-model checks of DIR/wm-check for an arm, by seed (undefined where missing). */
export function readChecks(dir, arm) {
  return SEEDS.map((s) => {
    const f = join(dir, 'wm-check', `${arm}-s${s}-sft.json`);
    return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : undefined;
  });
}

/** Mean eval format-error rate per arm over DIR/runs/<arm>-<env>-s<seed>.json. */
export function readFormatErrors(dir) {
  const by = {};
  const runs = join(dir, 'runs');
  if (!existsSync(runs)) return by;
  for (const f of readdirSync(runs).filter((n) => n.endsWith('.json'))) {
    const r = JSON.parse(readFileSync(join(runs, f), 'utf8'));
    if (typeof r.eval?.formatErrorRate === 'number') (by[r.method] ??= []).push(r.eval.formatErrorRate);
  }
  return Object.fromEntries(Object.entries(by).map(([m, xs]) => [m, mean(xs)]));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) { console.error('usage: decide.mjs RECORDS_DIR   (docs/results/study-v3/fldet or fl08)'); process.exit(2); }
  const lake = basename(dir.replace(/\/+$/, ''));
  if (!GATE[lake]) { console.error(`decide.mjs: ${dir} is not a lake folder of study v3 (fldet or fl08)`); process.exit(2); }
  if (!existsSync(join(dir, 'study.json'))) { console.error(`decide.mjs: ${join(dir, 'study.json')} is missing (run study table --out ${dir} first)`); process.exit(2); }
  const study = JSON.parse(readFileSync(join(dir, 'study.json'), 'utf8'));
  const c1 = gate({ spa: readChecks(dir, 'spa'), 'spa-mask-state-spans': readChecks(dir, 'spa-mask-state-spans') }, lake);
  const rule = decide(study.table, c1.verdict, readFormatErrors(dir));
  console.log(`# Study v3, ${lake}: the decision rule applied (DESIGN.md)\n\n${c1.text}\n\n${rule.text}`);
}
