// Method presets and their sizes. A preset is a RunConfig input: the method, its template and
// response format, and stage settings per size:
//   smoke  seconds on one CPU core; used by the tests (a micro model, a handful of games)
//   quick     the main job (npm start): a few minutes per method on a 2-core CPU with the tiny model, from the shipped base
//             (resources/bases/<env>, core/train/shipped-base.ts) when there is one, else after a ~90 min bootstrap (2,100 steps) cached per project
//   standard  the study size (docs/results/spa-cpu-v1/DESIGN.md): the same model and base as quick, more self-play, SFT, RL
//             and the study's final evaluation (128 puzzles × 8 samples); under an hour per method on 2 cores
//   cpu-real  a small pretrained model folder (model.path, e.g. SmolLM2-135M-Instruct) on a CPU with LoRA and the compact
//             format on the coordinate line: SFT teaches the world model in ~1 CPU-hour (docs/results/smollm2-wm); study v4's RL and eval
//   paper  the reference settings (arXiv 2510.15047, 4 GPUs, a 1.5B model): set model.path to a
//          local Qwen2.5 folder (model.source = 'hf-folder') to run them as published
// The stage plan of a method lives in planStages (core/train/plan.ts).
import { DEFAULT_ENV_ID, PRESET_SIZES, type Method, type PresetSize, type RunConfigInput } from '../api/run-config.js';

/** The sizes a method preset defines (RUN_SIZES rows with preset: true, core/api/run-config.ts; the GPU sizes are the paper size's). */
export type { PresetSize };
export const SIZES: readonly PresetSize[] = PRESET_SIZES;

/** A method preset: one row of the table below, registered for every size by core/engine/presets.ts. */
export interface MethodPreset {
  id: string;
  title: string;
  description: string;
  method: Method;
  /** Config fragment shared by all sizes (template, method-specific stage switches). */
  base: RunConfigInput;
  /** Per-size fragments over `base` (settings whose right value depends on the model size). */
  bySize?: Partial<Record<PresetSize, RunConfigInput>>;
  /** The sizes it is offered at (default: all). */
  sizes?: PresetSize[];
}

// Template kinds; smoke/quick use the compact tiny-* variants (core/prompts/tiny-templates.ts), paper the full presets.
const coordinates = { preset: '@spa', responseFormat: 'world-model' } as const;
const rawPlain = { preset: '@vanilla', responseFormat: 'plain' } as const;
const TEMPLATE_BY_SIZE: Record<PresetSize, Record<string, string>> = {
  smoke: { '@spa': 'tiny-spa', '@vanilla': 'tiny-vanilla', '@random-coordinates': 'tiny-random-coordinates' },
  // quick and standard: the compact format (issue 23; tiny-spa/tiny-vanilla were study spa-cpu-v1's, still selectable by name)
  quick: { '@spa': 'tiny-compact', '@vanilla': 'tiny-compact-plain', '@random-coordinates': 'tiny-random-coordinates' },
  standard: { '@spa': 'tiny-compact', '@vanilla': 'tiny-compact-plain', '@random-coordinates': 'tiny-random-coordinates' },
  // cpu-real: the compact format with the state as the SPA coordinate line, in the model folder's own chat template. SmolLM2's
  // BPE merges grid runs into tokens a move must rewrite: on the grid its prediction given the action was 20% after 1,632
  // examples, on the coordinate line 100% after 1,064 (docs/results/smollm2-wm). Every arm sees the same state form (the
  // paper's vanilla baseline reads the raw grid; here vanilla-rl reads the coordinate line, so SPA - vanilla is not also a
  // difference of state form: docs/results/study-v4, amendment of 2026-11-29 evening).
  'cpu-real': { '@spa': 'tiny-compact-coordinates', '@vanilla': 'tiny-compact-coordinates-plain', '@random-coordinates': 'tiny-random-coordinates' },
  paper: { '@spa': 'spa', '@vanilla': 'vanilla', '@random-coordinates': 'random-coordinates' },
};

export const PRESET_DEFINITIONS: MethodPreset[] = [
  {
    id: 'vanilla-rl',
    title: 'Vanilla RL',
    method: 'vanilla-rl',
    description: "PPO on the raw grid with the plain <think>/<answer> format (the paper's baseline).",
    base: { method: 'vanilla-rl', template: rawPlain },
    // the plain reply `<think>I will try X.</think><answer>X</answer>` is ~20 SmolLM2 tokens; the cap bounds what a malformed
    // reply costs (the imported model writes free text to the cap: docs/results/study-v4)
    bySize: { 'cpu-real': { stages: { rollout: { maxNewTokens: 48 } } } },
  },
  {
    id: 'state-estimation-rl',
    title: 'State-estimation RL',
    method: 'state-estimation-rl',
    description: 'PPO with the coordinates template and the world-model format, no SFT.',
    base: { method: 'state-estimation-rl', template: coordinates },
  },
  {
    id: 'state-estimation-rl-plain',
    title: 'State-estimation RL, plain format',
    method: 'state-estimation-rl',
    description: 'PPO with the coordinates template and the plain <think>/<answer> format, no SFT (the released run_baseline.sh).',
    base: { method: 'state-estimation-rl', template: { preset: '@spa', responseFormat: 'plain' } },
  },
  {
    id: 'spa',
    title: 'SPA',
    method: 'spa',
    description: "Self-play, ground-truth replacement, SFT on the true states, then PPO (the paper's method).",
    base: { method: 'spa', template: coordinates },
  },
  {
    id: 'online-wm-rl',
    title: 'Online world-model RL',
    method: 'online-wm-rl',
    description:
      'VAGEN-style: PPO with a per-turn reward 0.5·F1(observation) + 0.5·F1(prediction) (entity F1) and a format reward 0.5 for well-formatted turns, no SFT.',
    base: { method: 'online-wm-rl', template: coordinates, stages: { rl: { worldModelReward: 1, worldModelScore: 'entity-f1', formatBonus: 0.5 } } },
  },
  {
    id: 'rwml-rl',
    title: 'RWML + RL',
    method: 'rwml-rl',
    description: 'RWML-style GRPO on next-state prediction with a binarised similarity reward, then PPO.',
    base: { method: 'rwml-rl', template: coordinates },
  },
  {
    id: 'sft-only',
    title: 'SFT only',
    method: 'sft-only',
    description: 'Self-play SFT on the true states, no RL.',
    base: { method: 'sft-only', template: coordinates },
  },
  // ablations of SPA
  {
    id: 'spa-mask-state-spans',
    title: 'SPA, state spans masked',
    method: 'spa',
    description:
      "The paper's ablation: the SFT loss skips the observation/prediction contents (tags kept), so SFT teaches format and actions but not " +
        "states. The released code ends up close to this (placeholder tokens, masked off by one).",
    base: { method: 'spa', template: coordinates, stages: { sft: { maskStateSpans: true } } },
  },
  {
    id: 'spa-self-belief',
    title: 'SPA, self-belief states',
    method: 'spa',
    description: "Ablation: no ground-truth replacement; SFT on the model's own states.",
    base: { method: 'spa', template: coordinates, stages: { selfplay: { groundTruthReplacement: false } } },
  },
  {
    id: 'spa-random-action',
    title: 'SPA, random-action data',
    method: 'spa',
    description: 'Ablation: self-play turns written by a random-action generator instead of the policy.',
    base: { method: 'spa', template: coordinates, stages: { selfplay: { policy: 'random' } } },
  },
  {
    id: 'spa-random-coordinates',
    title: 'SPA, random coordinates',
    method: 'spa',
    description: 'Ablation: the state text is well-formed but wrong coordinates.',
    base: { method: 'spa', template: { preset: '@random-coordinates', responseFormat: 'world-model' } },
  },
  {
    id: 'spa-sft-epochs-1',
    title: 'SPA, 1 SFT epoch',
    method: 'spa',
    description: 'Ablation: number of SFT epochs (1).',
    base: { method: 'spa', template: coordinates, stages: { sft: { epochs: 1 } } },
  },
  {
    id: 'spa-sft-epochs-6',
    title: 'SPA, 6 SFT epochs',
    method: 'spa',
    description: 'Ablation: number of SFT epochs (6).',
    base: { method: 'spa', template: coordinates, stages: { sft: { epochs: 6 } } },
  },
  {
    // docs/results/spa-cpu-v1/README.md section 8: the tiny model's predictions given the action went from 2% (base) to 38%
    // after 24,000 drills in one SFT epoch (~21 min on one core); after 3,000-12,000 they stayed at 0-11%.
    id: 'spa-drills',
    title: 'SPA + one-action drills',
    method: 'spa',
    description: 'Not in the paper: SPA + 24,000 one-action drills in SFT (quick has 8,000), so the tiny model learns the dynamics on a CPU.',
    base: { method: 'spa', template: coordinates, stages: { selfplay: { alignPlan: true } } },
    bySize: {
      smoke: { stages: { selfplay: { drills: 8 } } },
      quick: { stages: { selfplay: { drills: 24000 }, sft: { epochs: 1, batchSize: 32, lr: 1e-3 }, eval: { worldModelTurns: 64 } } },
      standard: { stages: { selfplay: { drills: 24000 }, sft: { epochs: 1, batchSize: 32, lr: 1e-3 } } },
    },
    sizes: ['quick', 'smoke', 'standard'],
  },
  {
    // docs/results/mainjob-v3, session 8: the main job's move stayed state-blind in every SFT design that mixed the rule's
    // labelled moves into the epoch; a phase of its own on those games (sft.decisionSteps) made it read the state.
    id: 'spa-teacher',
    title: 'SPA + a one-step teacher',
    method: 'spa',
    description: 'Not in the paper: SPA whose SFT also imitates 1,500 games played by a one-step rule on the true map (goal > ' +
      'nearer ice > ice > edge > hole), then a decision phase on those games alone (moves weighted 20, drills beside them); the ' +
      'world model comes from 8,000 drills. The move is imitated from the rule, not found by RL. FrozenLake only. npm start runs it.',
    base: { method: 'spa', template: coordinates, env: { id: 'frozenlake' } },
    bySize: {
      smoke: { stages: { selfplay: { drills: 4, lookahead: 4, lookaheadTurns: 2, lookaheadForm: 'none' }, sft: { maskActionSpans: true, decisionSteps: 2 } } },
      quick: {
        stages: {
          // quick's own 8,000 drills (teacher3 in docs/results/mainjob-v3: 6,000 left the world model under 50% on 5 of 12 runs)
          selfplay: { games: 8, lookahead: 1500, lookaheadTurns: 4, lookaheadForm: 'none' },
          sft: { maskActionSpans: true, decisionSteps: 150, decisionMoveWeight: 20, decisionDrills: 1 },
          // Pass@k at RL's steps 0 and 2 on the eval's 8 puzzles: the eval prints RL's own paired gain over its start
          rl: { passAtKEvery: 2, passAtKPuzzles: 8 },
        },
      },
      // standard keeps its own self-play and drills (unmeasured with the teacher)
      standard: {
        stages: {
          selfplay: { lookahead: 1500, lookaheadTurns: 4, lookaheadForm: 'none' },
          sft: { maskActionSpans: true, decisionSteps: 150, decisionMoveWeight: 20, decisionDrills: 1 },
        },
      },
    },
    sizes: ['quick', 'smoke', 'standard'],
  },
];

// quick and standard share the model, the rollout shape and the bootstrap, so one base (shipped or cached) serves both.
const TINY_MODEL: RunConfigInput['model'] = {
  source: 'preset',
  preset: 'tiny',
  // chunks of ~2,000 padded tokens: a 2 x 64 model's CPU step is ~2x faster per row in chunks of 4-16 rows of 280 tokens than
  // in one of 32 (the attention scores stay in cache); the step itself is the same for any budget
  memory: { tokensPerMicroBatch: 2048 },
  overrides: {
    hidden_size: 64,
    intermediate_size: 176,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 4,
    max_position_embeddings: 2048,
  },
};
// maxNewTokens 600: character-level world-model replies are 240–546 characters (tests/train/bootstrap-layout.test.ts).
export const TINY_ROLLOUT = { maxTurns: 3, maxNewTokens: 600, maxContextTokens: 2048, batchSize: 16 };
// Bootstrap: true observations, counterfactual predictions and copy drills (audit B2); the gate says whether the base can
// read a state. 900 steps alone failed FrozenLake's gate (observation exact 0%); three extension phases of 400 steps with
// batch 16, lr 2e-3 and one copy drill per game brought it to 32%, 74%, then 94%: gate passed at 2,100 steps
// (docs/results/spa-cpu-v1/README.md sections 1, 3, 5; ~90 min on 2 cores). That base is shipped (resources/bases/frozenlake);
// other envs train it once per project (cached, shared by a study's methods; resumable every 50 steps).
const BOOTSTRAP_EXTENSION = { steps: 400, batchSize: 16, lr: 2e-3, copyDrills: 1 };
export const TINY_BOOTSTRAP = { games: 600, steps: 900, batchSize: 8, lr: 3e-3, extend: [BOOTSTRAP_EXTENSION, BOOTSTRAP_EXTENSION, BOOTSTRAP_EXTENSION] };

// The compact format of quick and standard (issue 23, docs/results/compact-v2): one action per turn (so the prediction is of
// the action the answer takes), 10 turns (FrozenLake's and Sokoban's 10-action game budget, one action at a time), replies of
// ~70 tokens (maxNewTokens 160 covers Sokoban 6x6's ~120); a "nothing moves" base (prediction = the observation copied: it
// reads and copies the state, and knows no dynamics). The shipped FrozenLake base (resources/bases/frozenlake-compact) was
// trained warm from study v1's base, which already copies a state, in 300 steps (3.9 min; gate: observation 100%,
// prediction 0% on state-changing turns); from scratch the same model sat on the copy plateau (all-ice grids) for 430+ steps.
// TINY_ROLLOUT / TINY_BOOTSTRAP: study spa-cpu-v1's settings (tiny-spa, resources/bases/frozenlake), kept for reproducing it.
export const COMPACT_ROLLOUT = { maxTurns: 10, maxActionsPerTurn: 1, maxNewTokens: 160, maxContextTokens: 2048, batchSize: 16 };
export const COMPACT_BOOTSTRAP = {
  games: 600, steps: 300, batchSize: 16, lr: 1e-3, copyDrills: 1, turns: 3, prediction: 'copy' as const, templates: ['tiny-compact-plain', 'tiny-compact'],
};

/** cpu-real's LoRA: rank 16, alpha 32 (scale 2) on every linear projection of a layer (4.9M trainable of SmolLM2-135M's 134.5M). */
export const CPU_REAL_LORA = {
  rank: 16, alpha: 32, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
};

/** Stage settings and model per size (merged under the preset's own fragment). */
export const SIZE_SETTINGS: Record<PresetSize, RunConfigInput> = {
  smoke: {
    size: 'smoke',
    model: {
      source: 'preset',
      preset: 'tiny',
      overrides: {
        hidden_size: 16,
        intermediate_size: 32,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        num_key_value_heads: 2,
        max_position_embeddings: 1024,
      },
    },
    stages: {
      rollout: { maxTurns: 2, maxNewTokens: 12, maxContextTokens: 1024, batchSize: 8 },
      bootstrap: { games: 2, steps: 1, batchSize: 2, maxLength: 1024 },
      // A micro model trained for seconds cannot write a well-formed world-model turn (240–546 characters, while
      // replies are capped at 12 tokens here), so its self-play would keep 0 rows: smoke self-play uses the
      // random-action generator (well-formed turns, real states), and a smoke run shows a dataset, SFT and boards.
      selfplay: { games: 4, policy: 'random' },
      sft: { epochs: 1, batchSize: 4, maxLength: 1024 },
      rl: { steps: 1, groups: 1, groupSize: 2, miniBatchSize: 4, passAtKEvery: 1, passAtKPuzzles: 1 },
      rwml: { steps: 1, examples: 1, groupSize: 2, maxNewTokens: 12 },
      eval: { puzzles: 2, samples: 2, k: [1, 2], perplexityRows: 1 },
    },
  },
  quick: {
    // The main job (npm start), sized for a shared 2-core CPU: a 2-layer width-64 character model (~0.1M parameters)
    // from the shipped base; 240-269 s on a quiet 2-core machine (torch), per stage in docs/results/compact-v2/README.md section 3b.
    size: 'quick',
    model: TINY_MODEL,
    stages: {
      rollout: COMPACT_ROLLOUT,
      bootstrap: COMPACT_BOOTSTRAP,
      selfplay: { games: 24, alignPlan: true, drills: 8000 },
      // SFT: the policy's 24 games (plan-aligned) + 8,000 one-action drills, one epoch at batch 32, lr 2e-3 (~250 steps): the
      // prediction given the action goes from the base's 0% to >= 50% (docs/results/compact-v2/README.md, 3 seeds).
      sft: { epochs: 1, batchSize: 32, lr: 2e-3, maxLength: 2048 },
      // RL lr 2e-5, critic lr 1e-5: with the shared trunk the value step trains the trunk at criticLr, and 1e-3 wiped out the
      // format within 3 steps (docs/results/spa-cpu-v1/README.md section 4); 1e-5 did it in ~15 steps of 32 episodes
      // (spa-cpu-v2/format-drift), so standard uses a separate critic; quick's 2 steps stay far below that.
      // No tracked Pass@k (it took ~80 of RL's ~220 s); the final eval reports Pass@k.
      // 2 steps (12-45 s each on one core): the main job fits 5 minutes (compact-v2 section 3b);
      // RL does not move this base's play at any lr tried (docs/results/rl-learns), so the steps show the stage, not a gain.
      rl: { steps: 2, groups: 2, groupSize: 4, miniBatchSize: 8, passAtKEvery: 0, passAtKPuzzles: 4, lr: 2e-5, criticLr: 1e-5 },
      rwml: { steps: 3, examples: 4, groupSize: 4, maxNewTokens: 600 },
      eval: { puzzles: 8, samples: 4, k: [1, 4], perplexityRows: 8, worldModelTurns: 64 },
    },
  },
  standard: {
    // The study size (docs/results/spa-cpu-v1/DESIGN.md): quick's model, rollout shape and base (the shipped base serves
    // both), more self-play and SFT, RL long enough to move, and the design's final evaluation (128 puzzles × 8 samples).
    size: 'standard',
    // A separate critic (as the paper size and RAGEN): with the shared trunk, the value step's own AdamW moves every trunk weight
    // at criticLr toward returns it cannot predict, and over ~15 RL steps that wore the world-model reply away (format errors
    // 5% -> 80% with the policy frozen; 3% with a separate critic: docs/results/spa-cpu-v2/format-drift). Study spa-cpu-v2 was
    // registered with the shared trunk and pins it (its run.sh).
    model: { ...TINY_MODEL, criticMode: 'separate' },
    stages: {
      rollout: COMPACT_ROLLOUT,
      bootstrap: COMPACT_BOOTSTRAP,
      // study v2 (docs/results/spa-cpu-v2/DESIGN.md): quick's SFT recipe with 16,000 drills
      selfplay: { games: 128, alignPlan: true, drills: 16000 },
      sft: { epochs: 1, batchSize: 32, lr: 2e-3, maxLength: 2048 },
      rl: { steps: 30, groups: 4, groupSize: 8, miniBatchSize: 16, passAtKEvery: 10, passAtKPuzzles: 32, lr: 2e-5, criticLr: 1e-5 },
      rwml: { steps: 20, examples: 16, groupSize: 4, maxNewTokens: 600 },
      eval: { puzzles: 128, samples: 8, k: [1, 8], perplexityRows: 32, worldModelTurns: 64 },
    },
  },
  'cpu-real': {
    // A small pretrained instruct model folder on a CPU (issue 35; made for SmolLM2-135M-Instruct imported from its GGUF by
    // `model import`): set model.path. LoRA (rank 16 on every projection: 69 train tokens per CPU-second against full
    // fine-tuning's 40, and ~1 GB less RSS; science review 2 section 3c), the compact format in the folder's chat template,
    // the deterministic-lake world model taught by SFT (docs/results/smollm2-wm: the same self-play and SFT as its
    // wm-config.json, tests/train/cpu-real-preset.test.ts), and study v4's RL and eval (docs/results/study-v4).
    size: 'cpu-real',
    backend: 'torch',
    model: {
      source: 'hf-folder',
      lora: CPU_REAL_LORA,
      // memory is not the limit of a 135M model on a CPU, compute is: no activation recomputation, frozen weights in f32
      // (bf16 is widened at each use on a CPU)
      memory: { tokensPerMicroBatch: 2048, gradientCheckpointing: false, frozenDtype: 'f32', generationRows: 32 },
    },
    stages: {
      // 32 episodes generated together: one RL step's 4 x 8 in one batch. Replies up to 288 tokens: SmolLM2's world-model reply
      // on the coordinate line is 77-275 tokens (median 121, 99th percentile 231; 972 SFT rows of docs/results/smollm2-wm's
      // seed 0), so the cap cuts no well-formed reply; vanilla-rl's plain reply (~20 tokens) has its own cap of 48 (its
      // bySize below), since malformed replies run to the cap on every turn (~80 CPU-s of generation per 10-turn episode at
      // 160 tokens: docs/results/study-v4)
      rollout: { ...COMPACT_ROLLOUT, batchSize: 32, maxNewTokens: 288 },
      // the base writes no world-model turn a self-play filter keeps (docs/results/real-model), so self-play plays the
      // random-action generator; 400 one-action drills (their loss on the state contents only) carry the dynamics
      selfplay: { games: 24, policy: 'random', alignPlan: true, drills: 400 },
      // ~1,060 examples in 134 steps (2 epochs: each a checkpoint that survives a hard kill, and a point of the curve); on the
      // coordinate line this met the world-model gate (given the action 100%, observation 100%; docs/results/smollm2-wm)
      sft: { epochs: 2, batchSize: 8, lr: 1e-3, maxLength: 2048 },
      // 512 episodes (16 steps of 4 puzzles x 8; study v4 registered 960, cut to what its first seeds cost here: its
      // amendment of 2026-11-29 evening), critic-free GRPO (no second 135M model, no shared-trunk critic drift:
      // spa-cpu-v2/format-drift); Pass@k tracked at steps 0 and 16 on 16 puzzles; one row per episode in minibatches of 8
      // episodes, 4 updates a step in every arm (study v4's amendment of 2026-11-30 21:15: turn rows with their histories
      // cost 5.6x the tokens on vanilla's 10-turn episodes)
      rl: { algorithm: 'grpo', steps: 16, groups: 4, groupSize: 8, updateRows: 'episode', miniBatchSize: 8, lr: 5e-5, passAtKEvery: 16, passAtKPuzzles: 16 },
      rwml: { steps: 10, examples: 8, groupSize: 4, maxNewTokens: 160 },
      eval: { puzzles: 64, samples: 4, k: [1, 4], perplexityRows: 0, worldModelTurns: 64 },
    },
  },
  paper: {
    size: 'paper',
    model: { source: 'preset', preset: 'base', criticMode: 'separate' },
    stages: {
      rollout: { maxNewTokens: 400, maxContextTokens: 2048, batchSize: 256, temperature: 1 },
      bootstrap: { games: 2000, steps: 2000, batchSize: 16, templates: ['vanilla', 'spa'] },
      selfplay: { games: 1280 },
      // lossAggregation: each row weighs the same, as SPA's SFT trainer (micro-batch 1, sft/spa_sft_trainer.py:470-473)
      sft: { epochs: 5, lr: 1e-4, batchSize: 16, warmupFraction: 0.1, weightDecay: 0.01, gradClip: 1, maxLength: 2048, lossAggregation: 'seq-mean-token-mean' },
      // one update per step over the filtered batch (ppo_mini_batch_size = the batch), AdamW (0.9, 0.999), separate critic at 1e-5;
      // one row per episode, every reply trained (RAGEN's rows; updateRows 'episode');
      // each episode weighs the same in the policy and value losses, as RAGEN with micro-batch 1 (SPA config/base.yaml:12,
      // RAGEN dp_actor.py:356-360, dp_critic.py:253-255); the release's env-token mask (responseMask 'after-system') is refused
      rl: {
        lossAggregation: 'seq-mean-token-mean',
        steps: 1000,
        groups: 32,
        groupSize: 8,
        keepGroupsFraction: 0.25,
        gamma: 1,
        lambda: 1,
        clipLow: 0.2,
        clipHigh: 0.28,
        dualClip: 3,
        valueClip: 0.5,
        entropyCoef: 0.001,
        klCoef: 0,
        lr: 1e-6,
        criticLr: 1e-5,
        miniBatchSize: 32,
        updatesPerStep: 1,
        updateRows: 'episode',
        adamBetas: [0.9, 0.999],
        passAtKEvery: 50,
        passAtKPuzzles: 64,
      },
      rwml: { steps: 200, examples: 64, groupSize: 8, klCoef: 0.01, lr: 1e-6 },
      eval: { puzzles: 128, samples: 8, k: [1, 8], temperature: 1, perplexityRows: 256, templates: ['raw-grid', 'spa'] },
    },
  },
};

/**
 * Env options of the method presets where an env's own defaults are not the study's setting.
 * Sokoban 6x6 with 1 box and Sudoku 4x4 are their envs' defaults. FrozenLake is played as RAGEN
 * plays it: random start and goal (the corner map with Gymnasium's 1/3 success is solvable ~10% of
 * the time even by an optimal agent under the 5-turn/10-action protocol), success rate 0.8
 * (RAGEN's setting from 2025-10-26; oracle ~91%). Deterministic lakes (isSlippery false) are the
 * mechanism check; Gymnasium's 1/3 is a robustness row (set env.options.successRate). Options the
 * run sets itself win. Applied by presetEnvOptions when a preset run is resolved.
 */
export const PRESET_ENV_OPTIONS: Record<string, Record<string, unknown>> = {
  frozenlake: { randomStartGoal: true, successRate: 0.8 },
};

/** A preset run's env options: PRESET_ENV_OPTIONS of its env under the options it sets itself. */
export function presetEnvOptions(envId: string, options: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...(PRESET_ENV_OPTIONS[envId] ?? {}), ...(options ?? {}) };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge of config fragments: objects merge, arrays and scalars replace. */
export function mergeConfig(...parts: Array<Record<string, unknown> | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    if (!part) continue;
    for (const [key, value] of Object.entries(part)) {
      const prev = out[key];
      out[key] = isPlainObject(prev) && isPlainObject(value) ? mergeConfig(prev, value) : structuredClone(value);
    }
  }
  return out;
}

export function getMethodPreset(id: string): MethodPreset {
  const found = PRESET_DEFINITIONS.find((p) => p.id === id);
  if (!found) throw new Error(`unknown preset ${JSON.stringify(id)}; expected one of ${PRESET_DEFINITIONS.map((p) => p.id).join(', ')}`);
  return found;
}

/** The RunConfig input of a preset at a size, optionally for an env and with extra overrides. */
export function presetConfig(id: string, size: PresetSize = 'quick', overrides: RunConfigInput = {}): RunConfigInput {
  const def = getMethodPreset(id);
  if (!SIZES.includes(size)) throw new Error(`unknown size ${JSON.stringify(size)} for preset ${id}; expected one of ${SIZES.join(', ')}`);
  if (def.sizes && !def.sizes.includes(size)) throw new Error(`preset ${id} has no size ${JSON.stringify(size)}; it is offered at ${def.sizes.join(', ')}`);
  const envId = (overrides.env as { id?: string } | undefined)?.id ?? (def.base.env as { id?: string } | undefined)?.id ?? DEFAULT_ENV_ID;
  const merged = mergeConfig(SIZE_SETTINGS[size] as Record<string, unknown>, def.base as Record<string, unknown>,
    def.bySize?.[size] as Record<string, unknown> | undefined, overrides as Record<string, unknown>);
  const template = merged.template as { preset?: string } | undefined;
  if (template?.preset?.startsWith('@')) template.preset = TEMPLATE_BY_SIZE[size][template.preset] ?? template.preset.slice(1);
  if (!merged.name) merged.name = `${id} ${envId} ${size}`;
  if (PRESET_ENV_OPTIONS[envId])
    merged.env = {
      ...(merged.env as Record<string, unknown> | undefined),
      id: envId,
      options: presetEnvOptions(envId, (merged.env as { options?: Record<string, unknown> } | undefined)?.options),
    };
  return merged as RunConfigInput;
}
