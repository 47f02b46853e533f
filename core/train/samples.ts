// Sample generations during a long stage: every few steps the model writes one reply to a fixed
// held-out prompt, stored beside the reply it is trained towards (the target format), so that a
// researcher sees during training whether the format is being learnt, not only a loss curve.
// Stored in samples/<stage>.jsonl (one line per sample), read by runs.samples and the Run view.
import type { StageContext } from '../api/stage.js';
import type { ChatMessage } from '../model/chat.js';
import { parseResponse } from '../prompts/response.js';
import { GENERATION_PREFIX } from '../prompts/reply-format.js';
import type { ModelRuntime } from './runtime.js';

export interface StageSample {
  stage: string;
  step: number;
  time: number;
  prompt: string;          // the last user message the reply answers
  target: string;          // what the stage trains towards (e.g. the corrected self-play reply)
  generated: string;       // what the model wrote (greedy), including the forced prefix
  wellFormed: boolean;     // the generated reply parses in the run's response format
}

/** How many samples a stage of `totalSteps` writes: about `count`, evenly spaced, the last step included. */
export function sampleEvery(totalSteps: number, count = 4): number {
  return Math.max(1, Math.ceil(totalSteps / count));
}

/** Generate one greedy reply to `messages` (the conversation up to the user turn) and store it beside `target`. */
export interface SampleRequest { step: number; messages: ChatMessage[]; target: string; maxNewTokens: number; maxContextTokens: number }

export async function writeSample(ctx: StageContext, runtime: ModelRuntime, o: SampleRequest): Promise<StageSample> {
  const prefix = o.target.startsWith(GENERATION_PREFIX) ? GENERATION_PREFIX : '';
  const prompt = runtime.encodePrompt(o.messages, prefix, Math.max(1, o.maxContextTokens - o.maxNewTokens));
  const [out] = await runtime.generate([prompt], { maxNewTokens: o.maxNewTokens, temperature: 0, topP: 1, topK: 0, seed: 0 });
  const generated = prefix + (out?.text ?? '');
  const parsed = parseResponse(generated, { legalActions: [], maxActionsPerTurn: 99, responseFormat: ctx.config.template.responseFormat, strict: false });
  const sample: StageSample = {
    stage: ctx.stage, step: o.step, time: Date.now(), prompt: [...o.messages].reverse().find((m) => m.role === 'user')?.content ?? '',
    target: o.target, generated, wellFormed: !parsed.formatError,
  };
  ctx.appendJsonl(`samples/${ctx.stage}.jsonl`, [sample]);
  ctx.log('debug', `sample at ${ctx.stage} step ${o.step}: ${sample.wellFormed ? 'well-formed' : 'not well-formed'} (${generated.length} characters)`);
  return sample;
}
