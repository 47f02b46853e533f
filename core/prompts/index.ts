// core/prompts: templates (data, Liquid, content-hashed), state texts, the episode chat,
// response parsing, ground-truth replacement and world-model scoring. Pure: no fs, no TF.js.
import type { Board } from '../api/records.js';
import { createEnv } from '../envs/index.js';
import type { PromptTemplate } from './template.js';
import { EpisodeSession, type ChatMessage } from './session.js';

export {
  TemplateSchema, ResponseFormatSchema, TemplateError, TEMPLATE_PARTS, DEFAULT_FORMAT,
  validateTemplate, assertTemplate, templateHash, canonicalJson, renderPart, listTemplatePresets, getTemplatePreset,
  type PromptTemplate, type ResponseFormat, type TemplateIssue, type ValidateResult, type TemplatePart,
} from './template.js';
export { spaCoordinates, coordinateListing, relations, stateJson, randomCoordinates, stateVariables } from './state-text.js';
export {
  parseResponse, turnPenalty, stateSpans, findBlock, normalizeAction, FORMAT_PENALTY,
  type ParseOptions,
} from './response.js';
export { parseStateText, scoreWorldModel, coordinatePolicy } from './world-model.js';
export { EpisodeSession, renderState, randomWellFormedResponse, type ChatMessage, type SessionOptions, type EpisodeMeta } from './session.js';

export interface PromptPreview {
  system: string;
  messages: ChatMessage[];   // system + first user message, ready for generation
  stateText: string;
  board: Board;
  generationPrefix: string;
}

/** The first prompt of an episode for a template, env, options and seed (what the model sees first). */
export function previewPrompt(
  template: PromptTemplate,
  envId: string,
  envOptions: Record<string, unknown> = {},
  seed = 0,
  session: Partial<Omit<import('./session.js').SessionOptions, 'seed' | 'envOptions'>> = {},
): PromptPreview {
  const env = createEnv(envId, envOptions);
  const s = new EpisodeSession(env, template, { ...session, seed });
  const messages = s.messages();
  return { system: messages[0].content, messages, stateText: s.stateText(), board: env.board(), generationPrefix: s.generationPrefix() };
}
