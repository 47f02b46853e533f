// Compact built-in templates ("tiny-*") for tiny from-scratch models. Beside the prompt presets
// (template.ts) they keep the same state text and response formats, but drop the long
// instruction, legend and format reminder that a character-level model would otherwise spend most
// of its context and compute on (a 1.1k-character first message). The state part — what SPA is
// about — is identical to the full preset's. Resolved by name in resolve-template.ts.
import type { PromptTemplate } from './template.js';

function tiny(name: string, description: string, state: string, responseFormat: 'plain' | 'world-model'): PromptTemplate {
  return {
    name, description, responseFormat,
    parts: {
      system: 'Solve the {{ env.id }} puzzle.',
      instruction: 'Actions: {{ actions_text }}.',
      turn: '\\nTurn {{ turn }}:\\n{{ state }}\\n{{ actions_left }} actions left.\\n'.replace(/\\n/g, '\n'),
      reward: 'Reward: {{ reward }}\n',
      state,
      format: '',
    },
  };
}

// The compact world-model format (issue 23; docs/results/compact-v2): the prompt is the game's one-line rules and the state
// (the grid alone: no system line, no turn counter, no coordinate line), the reply the world-model reply with a one-line
// think, e.g. `<think><observation>\ngrid\n</observation>\nI will try Right.\n<prediction>\ngrid\n</prediction></think>
// <answer>Right</answer>` (~140 characters against ~300-550), played one action per turn (the presets set
// rollout.maxActionsPerTurn 1) so the prediction is of the one action the answer then takes. The rows are 4-10x shorter than
// tiny-spa's, so a CPU trains on 4-10x more examples per second; the prediction's offset from the observation is nearly constant.
// The rules line is the env's (EnvDefinition.rules, true for the env's options: "moves may slip" only on a slippery lake). Runs
// before 2026-11-27 19:00 UTC pinned the older text, which said "moves may slip" on every lake (docs/results/spa-cpu-v2).
const COMPACT_RULES = '{{ env.rules }} Actions: {{ actions_text }}.';

// The two formats' prompts differ in one phrase, so a base trained on both knows which reply a prompt asks for.
function compact(name: string, description: string, responseFormat: 'plain' | 'world-model', state = '{{ grid }}'): PromptTemplate {
  const ask = responseFormat === 'world-model' ? ' Write the state, your move, the next state.' : ' Write your move.';
  return {
    name, description, responseFormat,
    parts: { system: '', instruction: COMPACT_RULES + ask, turn: '\n{{ state }}\n', reward: '', state, format: '' },
  };
}

export const TINY_TEMPLATES: PromptTemplate[] = [
  tiny('tiny-spa', 'Compact prompt for tiny models; state = grid + the SPA coordinate line; world-model format.',
    '{{ grid }}\n{{ spa_coordinates }}', 'world-model'),
  tiny('tiny-vanilla', 'Compact prompt for tiny models; state = raw grid; plain format (vanilla RL).', '{{ grid }}', 'plain'),
  tiny('tiny-raw-grid', 'Compact prompt for tiny models; state = raw grid; world-model format.', '{{ grid }}', 'world-model'),
  tiny('tiny-random-coordinates', 'Compact prompt for tiny models; grid + well-formed but wrong coordinates (ablation).',
    '{{ grid }}\n{{ random_coordinates }}', 'world-model'),
  compact('tiny-compact', 'Compact world-model format for tiny models: one-line rules + the grid; reply = observation, plan, prediction, answer.',
    'world-model'),
  compact('tiny-compact-plain', 'Compact format for tiny models, plain reply (vanilla RL): one-line rules + the grid.', 'plain'),
  // For pretrained LLMs (issue 35): their BPE merges grid runs ("____", "_PO_") into tokens whose shift a move must rewrite, while
  // the coordinate line changes one digit per move. Same reply layout as tiny-compact; the state is the released SPA coordinate
  // line (state-text.ts spaCoordinates), which the env's parser reads back for world-model scoring. Source: ours.
  compact('tiny-compact-coordinates', 'Compact world-model format with the state as the SPA coordinate line instead of the grid (for pretrained LLMs).',
    'world-model', '{{ spa_coordinates }}'),
  // The plain-reply twin of tiny-compact-coordinates (vanilla RL), as tiny-compact-plain is tiny-compact's: the same prompt with
  // "Write your move." and the reply `<think>I will try X.</think><answer>X</answer>`. Issue 34 curve (a): whether a tiny
  // character-level model reads the player's and the goal's places more easily from the coordinate line than from the grid
  // (bench/results/rl-curves/README.md, session 4). Source: ours.
  compact('tiny-compact-coordinates-plain', 'Compact format with the state as the SPA coordinate line, plain reply (vanilla RL).',
    'plain', '{{ spa_coordinates }}'),
];
