// Saves the prompt template of the v2 TextWorld run (`tw-answer`, plain reply format) into a project, through the API a user's
// templates.save goes through. Usage: node bin/run-ts.mjs docs/results/textworld-rwml/save-template.ts PROJECT_DIR
// Why a template of its own: the untuned SmolLM2-135M writes no <answer> under tiny-compact-plain (v1, 100% format errors),
// so RWML had no executed turn to learn from. With a one-line example of the reply, ~1 in 4 of its samples at temperature 1
// is a well-formed admissible command (read on 8 samples, 2026-11-29); that is enough for RWML to get (state, action) examples.
import * as fs from 'node:fs';
import { createDispatcher } from '../../../core/host/dispatcher.js';
import { createInProcessClient } from '../../../core/host/in-process.js';

export const TW_ANSWER_TEMPLATE = {
  name: 'tw-answer',
  description: 'TextWorld, plain reply, with a one-line example of the reply (v2 RWML run on SmolLM2-135M).',
  responseFormat: 'plain',
  parts: {
    system: '',
    instruction: '{{ env.rules }} Reply with one admissible command, written as <answer>command</answer>. ' +
      'Example: <think>The exit is north.</think><answer>go north</answer>',
    turn: '\n{{ state }}\n',
    reward: '',
    state: '{{ grid }}',
    format: '',
  },
};

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: save-template.ts PROJECT_DIR');
  const d = createDispatcher({ host: 'in-process' });
  const api = createInProcessClient(d);
  try {
    if (fs.existsSync(dir)) await api.projects.open({ path: dir });
    else await api.projects.create({ path: dir });
    const saved = await api.templates.save({ name: TW_ANSWER_TEMPLATE.name, source: JSON.stringify(TW_ANSWER_TEMPLATE, null, 2) });
    console.log(`${saved.created ? 'saved' : 'already saved'}: ${TW_ANSWER_TEMPLATE.name}@${saved.version.hash.slice(0, 12)} in ${dir}`);
  } finally {
    await d.dispose({ kill: true });
  }
}

await main();
