// Instrumented check of the RL machinery on curve (a), the 4-armed contextual bandit (issue 34 item 3: "if (a) fails, the
// RL machinery has a bug: find it"). It runs the RL stage's own pieces (playEpisodes, turnSamples, samplingStats, the
// algorithm's buildRows, updateBatches, rlUpdate) step by step from the shipped base and measures, per step:
//   - sampling vs training: the generation-time log-probability of every sampled reply token against the one the update
//     uses as its old log-probability (samplingStats); they must agree (max |diff| small), else the update trains a policy
//     other than the one that played;
//   - the decision table on fixed probe puzzles: p(move | state) at the plan's action token, teacher-forced after
//     "I will try " (the tokens the policy loss trains), its mean p(correct move), the move marginal and I(move; state);
//   - on the step's own batch: the change of log p(correct | s) over the update, for the batch's states (it must rise
//     when the update pushes the rewarded move) and its part not explained by the marginal's change.
// Usage: node bin/run-ts.mjs bench/rl-curves-check.ts [--backend wasm|torch] [--steps 16] [--set stages.rl.lr=1e-3 ...]
//        [--probe 48] [--out FILE.jsonl] [--mode rl|bc|pg] [--save DIR]   (one JSON line per step; settings as the run's --set
//        paths; --mode bc: behaviour cloning on the rewarded move's token, bc-reply: on the whole rewarded reply (its format
//        too; --move-weight K weighs its two move letters K), --mode pg: REINFORCE on the move token only; --save: the
//        model after the last step, as a checkpoint folder an RL run can start from)
//        [--sil-steps K [--sil-batch 16] [--sil-lr LR] [--sil-only]]   (--mode rl: self-imitation (Oh et al. 2018, "Self-Imitation
//        Learning", ICML) beside the RL update: every won turn's generated reply (prompt + the reply's ids as sampled) goes into
//        a buffer that keeps each distinct (prompt, reply) once; after the step's update, K cross-entropy steps on --sil-batch
//        rows drawn from it (the whole reply, as --mode bc-reply; lr --sil-lr, default stages.rl.lr); --sil-only: no RL update,
//        the buffer's steps alone; --sil-move-weight W: the decision token (ppo.ts decisionTokenMask) weighs W in that
//        cross-entropy; --sil-clean: a won turn enters the buffer only when its reply is well formed and its plan names the
//        move it answers ("I will try X." and <answer>X</answer>: without it the buffer keeps whatever text won, and the plan
//        drifts into noise while the answer carries the decision, seen in the first run). Issue 34 curve (a), session 4.)
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RunConfigSchema, type RunConfig } from '../core/api/run-config.js';
import { mergeConfig, presetConfig } from '../core/train/presets.js';
import { loadRuntime, saveRuntime, useBackend, type ModelRuntime, type TrainRow } from '../core/train/runtime.js';
import { groupSpecs, playEpisodes } from '../core/train/rollout.js';
import { rolloutDeps, sessionFactory, runTemplate } from '../core/train/episodes.js';
import { decisionTokenMask, samplingStats, turnSamples } from '../core/train/ppo.js';
import { rlAlgorithm } from '../core/train/rl-algorithms.js';
import { ensureRlOptimizer, rlUpdate, sharedTrunkValueView, updateBatches } from '../core/train/rl-stage.js';
import { shapedTurnReward } from '../core/train/rl-stage.js';
import { filterGroupsBySpread } from '../core/train/groups.js';

const BASE = fileURLToPath(new URL('../resources/bases/frozenlake-compact', import.meta.url));
const ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;
/** The plan's action token's index within the reply ("I will try X", character tokenizer). */
const LEAD_CHARS = 'I will try '.length;

function parseArgs(argv: string[]) {
  const sets: Array<[string, unknown]> = [];
  let backend = 'wasm', steps = 16, probe = 48, out = '', init = BASE, mode = 'rl', save = '', moveWeight = 1;
  let silSteps = 0, silBatch = 16, silLr = 0, silOnly = false, silMoveWeight = 1, silClean = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!, v = argv[i + 1];
    if (a === '--backend') { backend = v!; i++; }
    else if (a === '--steps') { steps = Number(v); i++; }
    else if (a === '--probe') { probe = Number(v); i++; }
    else if (a === '--out') { out = v!; i++; }
    else if (a === '--init') { init = v!; i++; }
    else if (a === '--mode') { mode = v!; i++; }
    else if (a === '--save') { save = v!; i++; }
    else if (a === '--move-weight') { moveWeight = Number(v); i++; }
    else if (a === '--sil-steps') { silSteps = Number(v); i++; }
    else if (a === '--sil-batch') { silBatch = Number(v); i++; }
    else if (a === '--sil-lr') { silLr = Number(v); i++; }
    else if (a === '--sil-only') { silOnly = true; }
    else if (a === '--sil-move-weight') { silMoveWeight = Number(v); i++; }
    else if (a === '--sil-clean') { silClean = true; }
    else if (a === '--set') {
      const eq = v!.indexOf('=');
      const raw = v!.slice(eq + 1);
      let value: unknown = raw;
      try { value = JSON.parse(raw); } catch { /* a string */ }
      sets.push([v!.slice(0, eq), value]);
      i++;
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!['rl', 'bc', 'bc-reply', 'pg'].includes(mode)) throw new Error(`--mode: expected rl, bc, bc-reply or pg; received ${mode}`);
  if (!(moveWeight > 0)) throw new Error(`--move-weight: expected a positive number; received ${moveWeight}`);
  if (!(Number.isInteger(silSteps) && silSteps >= 0)) throw new Error(`--sil-steps: expected a whole number >= 0; received ${silSteps}`);
  if (!(Number.isInteger(silBatch) && silBatch > 0)) throw new Error(`--sil-batch: expected a positive whole number; received ${silBatch}`);
  if (!(silLr >= 0)) throw new Error(`--sil-lr: expected a learning rate >= 0 (0 = stages.rl.lr); received ${silLr}`);
  if (silOnly && silSteps === 0) throw new Error('--sil-only needs --sil-steps K > 0');
  if (!(silMoveWeight > 0)) throw new Error(`--sil-move-weight: expected a positive number; received ${silMoveWeight}`);
  return { backend, steps, probe, out, init, sets, mode, save, moveWeight, silSteps, silBatch, silLr, silOnly, silMoveWeight, silClean };
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
    at = at[k] as Record<string, unknown>;
  }
  at[keys[keys.length - 1]!] = value;
}

/** Curve (a)'s config: the bench's settings (bench/rl-curves.sh) plus the --set overrides. */
function banditConfig(backend: string, init: string, sets: Array<[string, unknown]>): RunConfig {
  const overrides: Record<string, unknown> = {
    backend,
    env: { id: 'frozenlake', options: { isSlippery: false, p: 1, goalDistance: 1, maxSteps: 1 } },
    model: { source: 'checkpoint', path: init },
    stages: {
      rollout: { maxTurns: 1 },
      rl: { algorithm: 'grpo', lr: 1e-4, groups: 32, groupSize: 4, updatesPerStep: 1, lossAggregation: 'seq-mean-token-mean' },
    },
  };
  for (const [k, v] of sets) setPath(overrides, k, v);
  return RunConfigSchema.parse(mergeConfig(presetConfig('vanilla-rl', 'quick', overrides) as Record<string, unknown>, overrides));
}

interface Probe { seed: number; prompt: number[]; correct: number }

/** Probe puzzles: the prompt ids of each puzzle's first turn and its rewarded move (the one whose simulated step ends on G). */
function probePuzzles(config: RunConfig, runtime: ModelRuntime, seeds: number[]): Probe[] {
  const make = sessionFactory(config, runTemplate(config), config.stages.rollout);
  const limits = config.stages.rollout;
  const maxPrompt = Math.max(16, limits.maxContextTokens - limits.maxNewTokens);
  return seeds.map((seed) => {
    const session = make({ seed, group: 0, sample: 0, id: `probe-${seed}` });
    const rewards = ACTIONS.map((a) => session.simulate([a]).rewards.reduce((x, y) => x + y, 0));
    const correct = rewards.findIndex((r) => r > 0);
    if (correct < 0 || rewards.filter((r) => r > 0).length !== 1) throw new Error(`probe seed ${seed}: expected exactly one rewarded move, got ${rewards}`);
    return { seed, prompt: runtime.encodePrompt(session.messages(), session.generationPrefix(), maxPrompt), correct };
  });
}

/** p(move | state) at the plan's action token ("I will try X"), renormalised over the 4 moves' first tokens. */
async function decisionTable(runtime: ModelRuntime, prompts: number[][]): Promise<number[][]> {
  const lead = runtime.tokenizer.encode('I will try ');
  const firsts = ACTIONS.map((a) => runtime.tokenizer.encode(a)[0]!);
  const table: number[][] = [];
  // one row per state: the log-probs of all 4 first tokens need the logits; tokenStats gives the sampled token's log-prob,
  // so score each move's row (4 rows per state)
  const all = prompts.flatMap((p) => firsts.map((f) => ({ ids: [...p, ...lead, f] })));
  const stats: Array<{ logprobs: number[] }> = [];
  for (let i = 0; i < all.length; i += 64) stats.push(...(await runtime.tokenStats(all.slice(i, i + 64), false)));
  for (let s = 0; s < prompts.length; s++) {
    const lp = firsts.map((_, a) => { const st = stats[s * 4 + a]!; return st.logprobs[st.logprobs.length - 1]!; });
    const z = lp.map(Math.exp), sum = z.reduce((x, y) => x + y, 0);
    table.push(z.map((x) => x / sum));
  }
  return table;
}

function summarise(table: number[][], probes: Probe[]) {
  const n = table.length;
  const marginal = [0, 1, 2, 3].map((a) => table.reduce((x, p) => x + p[a]!, 0) / n);
  const pCorrect = table.reduce((x, p, i) => x + p[probes[i]!.correct]!, 0) / n;
  const mi = table.reduce((x, p) => x + p.reduce((y, q, a) => y + (q > 0 ? q * Math.log(q / marginal[a]!) : 0), 0), 0) / n;
  return { pCorrect: round(pCorrect), marginal: marginal.map((x) => round(x)), miNats: round(mi) };
}

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * One decision-token-only step through the same trainer ('grpo' loss, ratio 1): `bc` = behaviour cloning (the rewarded
 * move's token, advantage 1: the cross-entropy gradient); `pg` = REINFORCE as the science review's pilot (a move sampled
 * from p(move | state), reward 1 if rewarded, advantage = reward − its group's mean, the group = groupSize draws on one
 * puzzle). Rows: prompt + "I will try " + the move's first token, the loss mask on that token only.
 */
async function decisionOnlyStep(
  mode: 'bc' | 'bc-reply' | 'pg', runtime: ModelRuntime, config: RunConfig, step: number, lossParams: Record<string, unknown>, moveWeight = 1,
): Promise<{ success: number; prompts: number[][]; correct: number[]; stats: Record<string, number> }> {
  const section = config.stages.rl;
  const seeds = Array.from({ length: section.groups }, (_, g) => config.seeds.rlStart + step * section.groups + g);
  const puzzles = probePuzzles(config, runtime, seeds);
  const lead = runtime.tokenizer.encode('I will try ');
  const firsts = ACTIONS.map((a) => runtime.tokenizer.encode(a)[0]!);
  const table = await decisionTable(runtime, puzzles.map((p) => p.prompt));
  let rng = (step + 1) * 2_654_435_761 % 4_294_967_296;
  const uniform = () => { rng = (rng * 1_664_525 + 1_013_904_223) % 4_294_967_296; return rng / 4_294_967_296; };
  const rows: TrainRow[] = [];
  let wins = 0, draws = 0;
  puzzles.forEach((pz, g) => {
    const moves = mode !== 'pg' ? [pz.correct] : Array.from({ length: section.groupSize }, () => {
      const u = uniform(); let acc = 0;
      for (let a = 0; a < 4; a++) { acc += table[g]![a]!; if (u < acc) return a; }
      return 3;
    });
    const rewards: number[] = moves.map((a) => (a === pz.correct ? 1 : 0));
    const mean = rewards.reduce((x, y) => x + y, 0) / rewards.length;
    wins += rewards.reduce((x, y) => x + y, 0); draws += rewards.length;
    moves.forEach((a, k) => {
      if (mode === 'bc-reply') {
        // the whole rewarded reply in the loss (its format too): "I will try X.</think><answer>X</answer>"
        const reply = runtime.tokenizer.encode(`I will try ${ACTIONS[a]}.</think><answer>${ACTIONS[a]}</answer>`);
        const ids = [...pz.prompt, ...reply];
        // --move-weight K: the plan's and the answer's move letters weigh K (the cross-entropy's gradient there x K)
        const moves = [LEAD_CHARS, runtime.tokenizer.encode(`I will try ${ACTIONS[a]}.</think><answer>`).length].map((k) => pz.prompt.length + k);
        const weight = (t: number) => (t < pz.prompt.length ? 0 : moves.includes(t) ? moveWeight : 1);
        rows.push({ ids, arrays: { lossMask: ids.map((_, t) => (t >= pz.prompt.length ? 1 : 0)), advantages: ids.map((_, t) => weight(t)) } });
        return;
      }
      const ids = [...pz.prompt, ...lead, firsts[a]!];
      const adv = mode === 'bc' ? 1 : rewards[k]! - mean;
      const at = ids.length - 1;
      rows.push({
        ids,
        arrays: {
          lossMask: ids.map((_, t) => (t === at ? 1 : 0)),
          oldLogprobs: ids.map((_, t) => (t === at ? Math.log(table[g]![a]!) : 0)),
          advantages: ids.map((_, t) => (t === at ? adv : 0)),
        },
      });
    });
  });
  if (mode === 'bc-reply') {
    // old log-probs = the current ones (ratio 1: the 'grpo' loss's gradient is then the cross-entropy's)
    const current = await runtime.tokenStats(rows, false);
    rows.forEach((r, i) => { r.arrays.oldLogprobs = current[i]!.logprobs; });
  }
  const stats = await runtime.trainStep('grpo', rows, { ...lossParams, entropyCoef: 0 }, section.lr, section.gradClip);
  // the batch's cross-entropy of the rewarded move before the step (behaviour cloning's training loss)
  stats['bc/crossEntropy'] = -puzzles.reduce((x, pz, g) => x + Math.log(table[g]![pz.correct]!), 0) / puzzles.length;
  return { success: wins / draws, prompts: puzzles.map((p) => p.prompt), correct: puzzles.map((p) => p.correct), stats };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const config = banditConfig(args.backend, args.init, args.sets);
  const section = config.stages.rl;
  const limits = config.stages.rollout;
  process.stderr.write(`${await useBackend(config)}\n`);
  const algorithm = rlAlgorithm(section.algorithm);
  const ppo = algorithm.needsCritic;
  const policy = await loadRuntime(config.model.path!, { valueHead: ppo });
  ensureRlOptimizer(policy, section.adamBetas);
  const valueView = ppo ? sharedTrunkValueView(policy, section.adamBetas) : null;
  const lossParams = {
    clipLow: section.clipLow, clipHigh: section.clipHigh, dualClip: section.dualClip, valueClip: section.valueClip,
    entropyCoef: section.entropyCoef, valueCoef: section.valueCoef, klCoef: 0, klEstimator: section.klEstimator,
  };
  const probes = probePuzzles(config, policy, Array.from({ length: args.probe }, (_, i) => 3_000_000 + i));
  const emit = (row: Record<string, unknown>) => {
    const line = JSON.stringify(row);
    process.stdout.write(`${line}\n`);
    if (args.out) appendFileSync(args.out, `${line}\n`);
  };
  emit({
    kind: 'settings', backend: args.backend, init: args.init, mode: args.mode, moveWeight: args.moveWeight, rl: section, rollout: limits,
    sil: { steps: args.silSteps, batch: args.silBatch, lr: args.silLr || section.lr, only: args.silOnly, moveWeight: args.silMoveWeight, clean: args.silClean },
  });
  // self-imitation buffer: distinct won (prompt, reply) rows
  const silBuffer = new Map<string, number[][]>();
  let silRng = 12_345 + config.seeds.base;
  const silPick = (n: number) => { silRng = (silRng * 1_664_525 + 1_013_904_223) % 4_294_967_296; return Math.floor((silRng / 4_294_967_296) * n); };
  for (let step = 0; step < args.steps; step++) {
    const before = await decisionTable(policy, probes.map((p) => p.prompt));
    if (args.mode !== 'rl') {
      const dstep = await decisionOnlyStep(args.mode as 'bc' | 'bc-reply' | 'pg', policy, config, step, lossParams, args.moveWeight);
      const after = await decisionTable(policy, probes.map((p) => p.prompt));
      emit({
        kind: 'step', mode: args.mode, step, episodes: (step + 1) * (args.mode !== 'pg' ? section.groups : section.groups * section.groupSize),
        success: round(dstep.success), probeBefore: summarise(before, probes), probeAfter: summarise(after, probes),
        losses: { crossEntropyBefore: round(dstep.stats['bc/crossEntropy']!), gradNorm: round(dstep.stats['charts/gradNorm'] ?? Number.NaN), policy: round(dstep.stats['losses/policy'] ?? Number.NaN, 6) },
      });
      continue;
    }
    const specs = groupSpecs(`rl-${step}`, config.seeds.rlStart + step * section.groups, 0, section.groups, section.groupSize);
    specs.forEach((s) => { s.group = step * section.groups + s.group; });
    const deps = rolloutDeps(config, policy, limits, { runId: 'check', stage: 'rl', step });
    const results = await playEpisodes(specs, limits, config.seeds.base * 1_000_003 + step * 7_919, deps);
    const turnRewards = results.map((r) => r.record.turns.map((t) => shapedTurnReward(t, section).reward));
    const episodeRewards = turnRewards.map((rs) => rs.reduce((a, c) => a + c, 0));
    const groups = results.map((r) => r.spec.group);
    const kept = new Set(filterGroupsBySpread(episodeRewards, groups, section.keepGroupsFraction).keptGroups);
    const samples = turnSamples(results, (e) => kept.has(groups[e]!), { maskStateSpans: section.maskStateSpans, entropyOn: section.entropyOn, lossOn: section.lossOn, decode: (ids) => policy.tokenizer.decode(ids) });
    const stats = await samplingStats(policy, samples, { critic: ppo ? policy : undefined, reference: null, batchSize: section.miniBatchSize });
    // 1. sampling vs training log-probs of the sampled reply tokens
    let maxDiff = 0, sumDiff = 0, count = 0, decisionDiff = 0;
    samples.forEach((s, i) => {
      const gen = results[s.episode]!.tokens[s.turn]!.logprobs;
      gen.forEach((g, k) => {
        const d = Math.abs(g - stats.logprobs[i]![s.responseStart + k]!);
        maxDiff = Math.max(maxDiff, d); sumDiff += d; count++;
        if (k === LEAD_CHARS) decisionDiff = Math.max(decisionDiff, d);
      });
    });
    // 2. the batch's states, teacher-forced, before the update
    const batchPrompts = samples.map((s) => results[s.episode]!.tokens[s.turn]!.promptIds);
    const batchCorrect = samples.map((s) => {
      const session = sessionFactory(config, runTemplate(config), limits)(results[s.episode]!.spec);
      return ACTIONS.findIndex((a) => session.simulate([a]).rewards.reduce((x, y) => x + y, 0) > 0);
    });
    const batchBefore = await decisionTable(policy, batchPrompts);
    const built = algorithm.buildRows({ samples, turnRewards, episodeRewards, groups, stats, section });
    const rows: TrainRow[] = built.rows;
    const updates: Array<Record<string, number>> = [];
    if (!args.silOnly) {
      for (const indexes of updateBatches(rows.length, section, config.seeds.base + step * 101)) {
        updates.push(await rlUpdate(policy, null, valueView, indexes.map((i) => rows[i]!), lossParams, section));
      }
    }
    let silLoss = Number.NaN;
    if (args.silSteps > 0) {
      for (const r of results) {
        if (!r.record.success) continue;
        r.tokens.forEach((t, k) => {
          const parsed = r.record.turns[k]?.parsed;
          const clean = parsed && !parsed.formatError && parsed.answer !== null && (parsed.reasoning ?? '').trim() === `I will try ${parsed.answer}.`;
          if (args.silClean && !clean) return;
          silBuffer.set(`${t.promptIds.join(',')}|${t.responseIds.join(',')}`, [t.promptIds, t.responseIds]);
        });
      }
      const entries = [...silBuffer.values()];
      const losses: number[] = [];
      for (let k = 0; k < args.silSteps && entries.length > 0; k++) {
        const picked = Array.from({ length: Math.min(args.silBatch, entries.length) }, () => entries[silPick(entries.length)]!);
        const silRows: TrainRow[] = picked.map(([prompt, reply]) => {
          const ids = [...prompt!, ...reply!];
          const decision = decisionTokenMask(reply!, (x) => policy.tokenizer.decode(x));
          const weight = (t: number) => (t < prompt!.length ? 0 : decision[t - prompt!.length] ? args.silMoveWeight : 1);
          return { ids, arrays: { lossMask: ids.map((_, t) => (t >= prompt!.length ? 1 : 0)), advantages: ids.map((_, t) => weight(t)) } };
        });
        // ratio 1 (old log-probs = the current ones): the 'grpo' loss's gradient with advantage 1 is the cross-entropy's
        const current = await policy.tokenStats(silRows, false);
        silRows.forEach((r, i) => { r.arrays.oldLogprobs = current[i]!.logprobs; });
        const st = await policy.trainStep('grpo', silRows, { ...lossParams, entropyCoef: 0 }, args.silLr || section.lr, section.gradClip);
        losses.push(st['losses/policy'] ?? Number.NaN);
      }
      silLoss = losses.reduce((x, y) => x + y, 0) / Math.max(1, losses.length);
    }
    const batchAfter = await decisionTable(policy, batchPrompts);
    const after = await decisionTable(policy, probes.map((p) => p.prompt));
    const logGain = batchBefore.map((p, i) => Math.log(batchAfter[i]![batchCorrect[i]!]!) - Math.log(p[batchCorrect[i]!]!));
    // the marginal part: the mean over the batch of the change of log p(a) averaged over the 4 moves with the batch's own
    // frequency of each correct move; what is left is the state-dependent part of the gain
    const moveGain = [0, 1, 2, 3].map((a) => batchBefore.reduce((x, p, i) => x + Math.log(batchAfter[i]![a]!) - Math.log(p[a]!), 0) / batchBefore.length);
    const stateGain = logGain.reduce((x, g, i) => x + g - moveGain[batchCorrect[i]!]!, 0) / logGain.length;
    const success = results.filter((r) => r.record.success).length / results.length;
    const mean = (k: string) => updates.reduce((x, u) => x + (u[k] ?? 0), 0) / Math.max(1, updates.length);
    emit({
      kind: 'step', step, episodes: (step + 1) * results.length, success: round(success),
      probeBefore: summarise(before, probes), probeAfter: summarise(after, probes),
      samplingVsTraining: { maxAbs: round(maxDiff, 6), meanAbs: round(sumDiff / Math.max(1, count), 7), decisionTokenMaxAbs: round(decisionDiff, 6) },
      batch: {
        rows: rows.length, updates: updates.length, meanLogGainCorrect: round(logGain.reduce((x, y) => x + y, 0) / logGain.length),
        moveGain: moveGain.map((x) => round(x)), stateDependentGain: round(stateGain),
      },
      losses: { approxKl: round(mean('losses/approxKl'), 6), clipFrac: round(mean('losses/clipFrac')), gradNorm: round(mean('charts/gradNorm')), policy: round(mean('losses/policy'), 6) },
      formatErrors: round(results.filter((r) => r.record.turns.some((t) => t.parsed?.formatError)).length / results.length),
      ...(args.silSteps > 0 ? { sil: { buffer: silBuffer.size, loss: round(silLoss, 6) } } : {}),
    });
  }
  await valueView?.dispose();
  if (args.save) {
    // a start for RL (e.g. the behaviour-cloned start of --mode bc): weights only, as a stage's final checkpoint
    await saveRuntime(policy, args.save, { stage: `check-${args.mode}`, step: args.steps, parent: args.init, metrics: {} }, { resumePoint: false });
    process.stderr.write(`saved ${args.save}\n`);
  }
  policy.dispose();
}


await main();
