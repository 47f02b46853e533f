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

export const TINY_TEMPLATES: PromptTemplate[] = [
  tiny('tiny-spa', 'Compact prompt for tiny models; state = grid + the SPA coordinate line; world-model format.',
    '{{ grid }}\n{{ spa_coordinates }}', 'world-model'),
  tiny('tiny-vanilla', 'Compact prompt for tiny models; state = raw grid; plain format (vanilla RL).', '{{ grid }}', 'plain'),
  tiny('tiny-raw-grid', 'Compact prompt for tiny models; state = raw grid; world-model format.', '{{ grid }}', 'world-model'),
  tiny('tiny-random-coordinates', 'Compact prompt for tiny models; grid + well-formed but wrong coordinates (ablation).',
    '{{ grid }}\n{{ random_coordinates }}', 'world-model'),
];
