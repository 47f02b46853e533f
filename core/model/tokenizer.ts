// Tokenizers: one interface for the character-level tokenizer of tiny models (tokenizer-char.ts)
// and Hugging Face tokenizer.json files of pretrained models (tokenizer-hf.ts). Both save a
// tokenizer.json + tokenizer_config.json that Hugging Face tools (transformers, transformers.js,
// tokenizers) load, and `loadTokenizer(dir)` reads either back.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CharTokenizer } from './tokenizer-char.js';
import { HfTokenizer, type HfTokenizerExtras } from './tokenizer-hf.js';
import { TOKENIZER_MAX_BYTES, TokenizerError, readJsonFile, readTokenizerText } from './tokenizer-common.js';
import type { Tokenizer } from './tokenizer-common.js';

/**
 * Loads the tokenizer saved in `dir` (tokenizer.json, plus tokenizer_config.json when present).
 * Our character tokenizer is recognised by `spa_workbench.kind === "char"` in
 * tokenizer_config.json; anything else is loaded as a Hugging Face tokenizer (no network).
 */
export async function loadTokenizer(dir: string): Promise<Tokenizer> {
  const jsonPath = join(dir, 'tokenizer.json');
  if (!existsSync(jsonPath)) {
    throw new TokenizerError(
      `${jsonPath}: missing tokenizer.json; a model folder needs the Hugging Face tokenizer.json (older vocab.json/merges.txt-only folders are ` +
        `not supported: re-save the tokenizer with transformers' save_pretrained)`,
    );
  }
  const configPath = join(dir, 'tokenizer_config.json');
  const config = existsSync(configPath) ? await readJsonFile(configPath, 'tokenizer config') : {};
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new TokenizerError(`${configPath}: expected a JSON object, got ${JSON.stringify(config)?.slice(0, 80)}`);
  }
  const tokenizerJson = await readJsonFile(jsonPath, 'tokenizer.json', TOKENIZER_MAX_BYTES.tokenizerJson);
  const marker = (config as Record<string, unknown>).spa_workbench as { kind?: string } | undefined;
  if (marker?.kind === 'char') return CharTokenizer.fromJson(tokenizerJson, config as Record<string, unknown>, jsonPath);
  const extras: HfTokenizerExtras = {};
  // chat_template.jinja: newer transformers save the template beside tokenizer_config.json
  const templatePath = join(dir, 'chat_template.jinja');
  if (existsSync(templatePath)) extras.chatTemplate = await readTokenizerText(templatePath, 'chat_template.jinja', TOKENIZER_MAX_BYTES.chatTemplate);
  // generation_config.json's eos ids also end generation
  const generationPath = join(dir, 'generation_config.json');
  if (existsSync(generationPath)) {
    const generation = await readJsonFile(generationPath, 'generation config') as Record<string, unknown> | null;
    const eos = generation && typeof generation === 'object' ? generation.eos_token_id : undefined;
    if (eos !== undefined && eos !== null) {
      const list = Array.isArray(eos) ? eos : [eos];
      if (!list.every((x) => Number.isInteger(x) && x >= 0))
        throw new TokenizerError(`${generationPath}: key "eos_token_id": expected a token id or a list of ids, got ${JSON.stringify(eos)}`);
      extras.generationEosIds = list as number[];
    }
  }
  return HfTokenizer.fromJson(tokenizerJson, config as Record<string, unknown>, jsonPath, extras);
}

export { CharTokenizer, buildCharTokenizer, DEFAULT_CHARSET, DEFAULT_TAG_TOKENS } from './tokenizer-char.js';
export type { CharTokenizerOptions } from './tokenizer-char.js';
export { HfTokenizer } from './tokenizer-hf.js';
export { TokenizerError, readJsonFile } from './tokenizer-common.js';
export type { Tokenizer, ChatStyle, TokenOffset } from './tokenizer-common.js';
