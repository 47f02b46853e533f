// `spa-workbench model …`: inspect, create, sample from and score model folders (our
// checkpoints or local Hugging Face Qwen2 folders).
//
//   model info DIR [--json]
//   model init --preset tiny --out DIR [--seed S] [--value-head] [--chat-style compact|qwen] [--force]
//   model generate --model DIR --prompt TEXT [--chat] [--json] [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--stop STR...]
//   model score --model DIR --text TEXT [--json]
//   model export --model DIR --out DIR [--dtype f32|f16|bf16] [--merge-lora] [--force]
// generate, score and export take --backend auto|torch|wasm|cpu|tensorflow|tensorflow-gpu (default auto, SPA_BACKEND overrides it),
// chosen as a run chooses it (core/train/runtime.ts chooseCompute: torch when a Python with torch answers, else TF.js); on TF.js
// the model is judged by the operation's own memory need (core/train/auto-backend.ts operationBytes: generation = weights + K/V
// cache, scoring = weights + the text's logits, export = weights), never by a training step's.
//   model import FILE.gguf --out DIR [--force] [--json]   (a llama-architecture GGUF → a Hugging Face folder)
import type { Command } from 'commander';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { runAction as run, usageFail as fail } from './action.js';

function intFlag(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) fail(`${name}: expected an integer >= ${min}, received ${JSON.stringify(text)}`);
  return n;
}

function numberFlag(name: string, text: string | undefined, fallback: number, check: (n: number) => boolean, expected: string): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || !check(n)) fail(`${name}: expected ${expected}, received ${JSON.stringify(text)}`);
  return n;
}

function modelDir(dir: string | undefined): string {
  if (!dir) fail('--model: expected a model folder (a checkpoint or a Hugging Face Qwen2 folder)');
  const path = resolve(dir);
  if (!existsSync(path)) fail(`--model: folder ${path} does not exist`);
  return path;
}

async function backend(request: string | undefined): Promise<{ backend: string; summary: string }> {
  const { initBackend, parseBackendRequest } = await import('../model/backend.js');
  const report = await initBackend({ backend: request === undefined ? undefined : parseBackendRequest(request, '--backend') });
  return { backend: report.backend, summary: report.summary };
}

const COMPUTE_HELP = 'compute backend: auto (torch when a Python with torch answers, else TF.js), torch, wasm, cpu, tensorflow, tensorflow-gpu';

/**
 * The model folder on the compute backend `request` names (a runtime: torch worker or TF.js), loaded for inference (no gradients,
 * no optimizer). When TF.js wasm computes it, the operation's own need (`need`) must fit its heap: else a clear refusal that
 * names torch, before loading anything.
 */
async function openModel(
  dir: string, request: string | undefined, op: import('../train/auto-backend.js').ModelOperation,
  need: { rows: number; tokens: number; promptTokens?: number },
): Promise<{ runtime: import('../model/runtime.js').ModelRuntime; backend: string; summary: string }> {
  const { chooseCompute, loadRuntime } = await import('../train/runtime.js');
  const { operationFitProblem } = await import('../train/auto-backend.js');
  const { inspectHfFolder } = await import('../model/hf-load.js');
  const { COMPUTE_BACKENDS } = await import('../train/runtime.js');
  if (request !== undefined && !(COMPUTE_BACKENDS as readonly string[]).includes(request))
    fail(`--backend: expected one of ${COMPUTE_BACKENDS.join(', ')}, received ${JSON.stringify(request)}`);
  const choice = await chooseCompute(request ?? 'auto');
  if (choice.backend === 'wasm') {
    const problem = operationFitProblem((await inspectHfFolder(dir)).config, op, need);
    if (problem) fail(`--backend ${choice.requested}: ${problem}${choice.torch && !choice.torch.ok ? ` (torch: ${choice.torch.reason})` : ''}`);
  }
  if (choice.backend === 'torch' && choice.torch && !choice.torch.cuda && !choice.torch.mps) {
    // on a CPU a frozen bf16 copy is widened to f32 at every use: slower, and its numbers drift from the reference's; keep f32
    const { setMemorySettings } = await import('../model/memory.js');
    setMemorySettings({ frozenDtype: 'f32' });
  }
  const runtime = await loadRuntime(dir, { trainable: false, valueHead: false });
  return { runtime, backend: choice.backend, summary: choice.summary };
}

/**
 * Fail when `text` has characters the tokenizer cannot represent (it would map them to its unknown
 * token and score or continue a different text). Byte-level BPE tokenizers have no unknown token.
 */
function checkVocabulary(tokenizer: import('../model/tokenizer-common.js').Tokenizer, text: string, flag: string): void {
  const unk = tokenizer.tokenToId('<|unk|>') ?? tokenizer.tokenToId('<unk>');
  if (unk === undefined) return;
  const unkText = tokenizer.idToToken(unk);
  const { ids, offsets } = tokenizer.encodeWithOffsets(text);
  const bad = new Map<string, number>();
  ids.forEach((id, k) => {
    const piece = text.slice(offsets[k]![0], offsets[k]![1]);
    if (id === unk && piece !== unkText && !bad.has(piece)) bad.set(piece, offsets[k]![0]);
  });
  if (bad.size === 0) return;
  const list = [...bad]
    .slice(0, 10)
    .map(([ch, at]) => `${JSON.stringify(ch)} (U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}) at index ${at}`)
    .join(', ');
  const vocabulary = `the model's ${tokenizer.kind === 'char' ? 'character ' : ''}vocabulary`;
  fail(`${flag}: ${bad.size} character${bad.size === 1 ? '' : 's'} outside ${vocabulary}: ${list}${bad.size > 10 ? ', …' : ''}; ` +
    'expected text the tokenizer knows (the character tokenizer covers printable ASCII, newline, tab and a few symbols such as √ × → ·); ' +
    'replace or remove them');
}

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

interface InfoFlags { json?: boolean }
interface InitFlags { preset: string; out: string; seed?: string; valueHead?: boolean; chatStyle?: string; force?: boolean; backend?: string; json?: boolean }
interface GenerateFlags {
  model: string; prompt: string; chat?: boolean; system?: string; json?: boolean; maxNewTokens?: string; temperature?: string;
  topK?: string; topP?: string; seed?: string; stop?: string[]; backend?: string;
}
interface ScoreFlags { model: string; text: string; json?: boolean; backend?: string }
interface ImportFlags { out: string; force?: boolean; json?: boolean }
interface ExportFlags { model: string; out: string; dtype?: string; mergeLora?: boolean; force?: boolean; backend?: string; json?: boolean }

/** Files a model folder holds (ours or a Hugging Face one); --force replaces only folders made of these. */
const MODEL_JSON = [
  'config', 'generation_config', 'manifest', 'tokenizer', 'tokenizer_config', 'special_tokens_map', 'added_tokens', 'optimizer', 'adapter_config', 'vocab',
  'chat_template', 'preprocessor_config',
].join('|');
const MODEL_FILE = new RegExp(
  '^(?:[\\w.-]+\\.safetensors|model\\.safetensors\\.index\\.json|' +
    `(?:${MODEL_JSON})\\.json|chat_template\\.jinja|merges\\.txt|README\\.md|LICENSE(?:\\.\\w+)?|\\.gitattributes)$`,
);

function checkOut(outArg: string, force: boolean | undefined): string {
  const out = resolve(outArg);
  if (existsSync(out)) {
    if (!statSync(out).isDirectory()) fail(`--out: ${out} is a file; expected a folder path`);
    const entries = readdirSync(out, { withFileTypes: true });
    if (entries.length > 0 && !force) fail(`--out: ${out} is not empty; choose a new folder or pass --force to replace it`);
    // --force replaces the whole folder: never do that to anything but a model folder (a project, a home folder…).
    const foreign = entries.filter((e) => !e.isFile() || !MODEL_FILE.test(e.name)).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    if (entries.length > 0 && (foreign.length > 0 || !entries.some((e) => e.name === 'config.json' || e.name === 'manifest.json'))) {
      const holds = foreign.length ? ` (it holds ${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', …' : ''})` : ' (no config.json)';
      fail(`--out: ${out} is not a model folder${holds}; --force only replaces a model folder, because everything in it is deleted. ` +
        'Choose a new folder');
    }
  }
  return out;
}

export function registerModelCommands(program: Command): void {
  const model = program.command('model').description('inspect, create, sample from and score models (checkpoints or local Hugging Face Qwen2 folders)');

  model.command('info')
    .description('show a model folder: config, parameters, weight files and dtypes, tokenizer, generation defaults, manifest')
    .argument('<dir>', 'model folder (config.json, model.safetensors or shards, tokenizer.json)')
    .option('--json', 'print JSON')
    .action(run(async (dir: string, flags: InfoFlags) => {
      const { inspectHfFolder } = await import('../model/hf-load.js');
      const { readManifest } = await import('../model/checkpoint.js');
      const { loadTokenizer } = await import('../model/tokenizer.js');
      const path = resolve(dir);
      const info = await inspectHfFolder(path);
      const manifest = await readManifest(path);
      const tokenizer = info.hasTokenizer ? await loadTokenizer(path) : null;
      const c = info.config;
      const summary = {
        dir: path,
        architecture: 'Qwen2ForCausalLM',
        parameters: info.parameterCount,
        config: {
          vocab_size: c.vocab_size, hidden_size: c.hidden_size, intermediate_size: c.intermediate_size, num_hidden_layers: c.num_hidden_layers,
          num_attention_heads: c.num_attention_heads, num_key_value_heads: c.num_key_value_heads, max_position_embeddings: c.max_position_embeddings,
          rope_theta: c.rope_theta, tie_word_embeddings: c.tie_word_embeddings, attention_bias: c.attention_bias, value_head: c.value_head,
        },
        weights: { files: info.weightFiles, sharded: info.sharded, dtypes: info.dtypes, bytes: info.weightBytes },
        tokenizer: tokenizer
          ? {
            kind: tokenizer.kind, vocabSize: tokenizer.vocabSize, chatStyle: tokenizer.chatTemplate !== undefined ? 'template' : tokenizer.chatStyle,
            chatTemplate: tokenizer.chatTemplate !== undefined, eosTokenId: tokenizer.eosTokenId, padTokenId: tokenizer.padTokenId,
            stopTokenIds: tokenizer.stopTokenIds,
          }
          : null,
        generation: info.generation,
        manifest: manifest
          ? {
            stage: manifest.stage, step: manifest.step, parent: manifest.parent, created: manifest.created, metrics: manifest.metrics,
            sha256: manifest.weights.sha256, lora: manifest.lora,
          }
          : null,
      };
      if (flags.json) { console.log(JSON.stringify(summary, null, 2)); return; }
      console.log(`${path}`);
      console.log(`  Qwen2ForCausalLM, ${(info.parameterCount / 1e6).toFixed(3)}M parameters`);
      console.log(`  layers ${c.num_hidden_layers}, hidden ${c.hidden_size}, MLP ${c.intermediate_size}, heads ${c.num_attention_heads} ` +
        `(kv ${c.num_key_value_heads}), vocab ${c.vocab_size}, context ${c.max_position_embeddings}, rope_theta ${c.rope_theta}`);
      console.log(`  tied embeddings ${c.tie_word_embeddings}, attention bias ${c.attention_bias}, value head ${c.value_head}`);
      console.log(`  weights: ${info.weightFiles.join(', ')} ` +
        `(${Object.entries(info.dtypes).map(([d, n]) => `${n} ${d}`).join(', ')}; ${(info.weightBytes / 1e6).toFixed(2)} MB)`);
      console.log(
        tokenizer
          ? `  tokenizer: ${tokenizer.kind}, ${tokenizer.vocabSize} tokens, ` +
            (tokenizer.chatTemplate !== undefined ? "the folder's chat template" : `chat style ${tokenizer.chatStyle}`)
          : '  tokenizer: none (no tokenizer.json)',
      );
      if (info.generation) console.log(`  generation defaults: ${JSON.stringify(info.generation)}`);
      if (manifest) console.log(`  checkpoint: stage ${manifest.stage}, step ${manifest.step}, parent ${manifest.parent ?? '-'}, ` +
        `created ${manifest.created}, sha256 ${manifest.weights.sha256.slice(0, 16)}…`);
    }));

  model.command('init')
    .description('create a randomly initialised model with the character tokenizer, saved as a checkpoint')
    .requiredOption('--preset <name>', 'model size preset (tiny, small, base)')
    .requiredOption('--out <dir>', 'folder to write (must not exist or be empty, unless --force)')
    .option('--seed <n>', 'initialisation seed (default 0)')
    .option('--value-head', 'add a value head (PPO critic on the policy trunk)')
    .option('--chat-style <style>', 'chat layout the model will be trained on: compact (default) or qwen')
    .option('--force', 'overwrite an existing checkpoint folder')
    .option('--backend <name>', 'TF.js backend: auto, tensorflow-gpu, tensorflow, wasm, cpu')
    .option('--json', 'print the manifest as JSON')
    .action(run(async (flags: InitFlags) => {
      const { presetConfig, PRESETS } = await import('../model/config.js');
      if (!(flags.preset in PRESETS)) fail(`--preset: expected one of ${Object.keys(PRESETS).join(', ')}, received ${JSON.stringify(flags.preset)}`);
      const style = flags.chatStyle ?? 'compact';
      if (style !== 'compact' && style !== 'qwen') fail(`--chat-style: expected compact or qwen, received ${JSON.stringify(style)}`);
      const seed = intFlag('--seed', flags.seed, 0, 0);
      const out = checkOut(flags.out, flags.force);
      const summary = await backend(flags.backend);
      const { buildCharTokenizer } = await import('../model/tokenizer.js');
      const { CausalLM } = await import('../model/transformer.js');
      const { saveCheckpoint } = await import('../model/checkpoint.js');
      const tokenizer = buildCharTokenizer({ chatStyle: style });
      const config = presetConfig(flags.preset, { vocab_size: tokenizer.vocabSize, value_head: flags.valueHead ?? false });
      const m = new CausalLM(config, { seed });
      const manifest = await saveCheckpoint(out, {
        model: m, tokenizer, manifest: { parent: null, step: 0, stage: 'init', metrics: {}, extra: { preset: flags.preset, seed } },
      });
      m.dispose();
      if (flags.json) { console.log(JSON.stringify(manifest, null, 2)); return; }
      console.log(summary.summary);
      console.log(`wrote ${out}: preset ${flags.preset}, ${(manifest.weights.parameters / 1e6).toFixed(3)}M parameters, ` +
        `vocab ${tokenizer.vocabSize} (character tokenizer, ${style} chat), sha256 ${manifest.weights.sha256.slice(0, 16)}…`);
    }));

  model.command('generate')
    .description('sample a completion (seeded; KV cache)')
    .requiredOption('--model <dir>', 'model folder')
    .requiredOption('--prompt <text>', 'prompt text (raw; with --chat it becomes a user message)')
    .option('--chat', 'format the prompt as a chat user message followed by the assistant generation prompt')
    .option('--system <text>', 'system message (with --chat)')
    .option('--max-new-tokens <n>', 'maximum generated tokens (default: generation_config.json, else 64)')
    .option('--temperature <t>', 'sampling temperature, 0 = greedy (default: generation_config.json, else 1)')
    .option('--top-k <k>', 'keep the k most likely tokens, 0 = off (default: generation_config.json, else 0)')
    .option('--top-p <p>', 'nucleus sampling probability in (0, 1] (default: generation_config.json, else 1)')
    .option('--seed <n>', 'sampling seed (default 0)')
    .option('--stop <strings...>', 'stop strings, e.g. </answer>')
    .option('--backend <name>', COMPUTE_HELP)
    .option('--json', 'print JSON (text, tokens, log-probabilities, finish reason, timing)')
    .action(run(async (flags: GenerateFlags) => {
      const dir = modelDir(flags.model);
      // Validate every flag before loading anything; unset ones fall back to generation_config.json.
      intFlag('--max-new-tokens', flags.maxNewTokens, 64, 1);
      numberFlag('--temperature', flags.temperature, 1, (n) => n >= 0, 'a number >= 0');
      intFlag('--top-k', flags.topK, 0, 0);
      numberFlag('--top-p', flags.topP, 1, (n) => n > 0 && n <= 1, 'a number in (0, 1]');
      const seed = intFlag('--seed', flags.seed, 0, 0);
      if (flags.system !== undefined && !flags.chat) fail('--system: only used with --chat');
      const { inspectHfFolder } = await import('../model/hf-load.js');
      const { formatChat } = await import('../model/chat.js');
      const defaults = (await inspectHfFolder(dir)).generation ?? {};
      const maxNewTokens = intFlag('--max-new-tokens', flags.maxNewTokens, defaults.maxNewTokens ?? 64, 1);
      const temperature = numberFlag(
        '--temperature',
        flags.temperature,
        defaults.doSample === false ? 0 : (defaults.temperature ?? 1),
        (n) => n >= 0,
        'a number >= 0',
      );
      const topK = intFlag('--top-k', flags.topK, defaults.topK ?? 0, 0);
      const topP = numberFlag('--top-p', flags.topP, defaults.topP ?? 1, (n) => n > 0 && n <= 1, 'a number in (0, 1]');
      // an upper bound on the prompt's tokens before the tokenizer is loaded: its UTF-8 bytes plus the chat markup
      const promptBound = Buffer.byteLength(flags.prompt) + Buffer.byteLength(flags.system ?? '') + (flags.chat ? 256 : 0);
      const { runtime, backend: used } = await openModel(dir, flags.backend, 'generate', {
        rows: 1, tokens: promptBound + maxNewTokens, promptTokens: promptBound,
      });
      const tokenizer = runtime.tokenizer;
      try {
        checkVocabulary(tokenizer, flags.prompt, '--prompt');
        if (flags.system !== undefined) checkVocabulary(tokenizer, flags.system, '--system');
        const promptIds = flags.chat
          ? formatChat(
              [...(flags.system !== undefined ? [{ role: 'system', content: flags.system }] : []), { role: 'user', content: flags.prompt }],
              tokenizer,
              { addGenerationPrompt: true },
            ).ids
          : tokenizer.encode(flags.prompt);
        if (promptIds.length === 0) fail('--prompt: the prompt is empty');
        if (promptIds.length + maxNewTokens > runtime.config.max_position_embeddings) {
          fail(`--prompt: ${promptIds.length} prompt tokens + --max-new-tokens ${maxNewTokens} exceed the model's context ` +
            `of ${runtime.config.max_position_embeddings} tokens`);
        }
        const stop = flags.stop ?? [];
        const started = performance.now();
        const [result] = await runtime.generate([promptIds], { maxNewTokens, temperature, topK, topP, seed, stop });
        const seconds = (performance.now() - started) / 1000;
        const stopIds = new Set([tokenizer.eosTokenId, ...tokenizer.stopTokenIds]);
        const finishReason = result!.ids.length > 0 && stopIds.has(result!.ids.at(-1)!) ? 'eos'
          : stop.some((s) => s.length > 0 && result!.text.includes(s)) ? 'stop' : 'length';
        if (flags.json) {
          console.log(JSON.stringify({
            model: dir, backend: used, device: runtime.info.device, prompt: flags.prompt, promptTokens: promptIds.length, promptIds,
            sampling: { maxNewTokens, temperature, topK, topP, seed },
            text: result!.text, tokens: result!.ids,
            logprobs: result!.logprobs.map((x) => round(x)), finishReason,
            seconds: round(seconds, 3), tokensPerSecond: round(result!.ids.length / seconds, 1),
          }, null, 2));
        } else {
          console.log(result!.text);
          console.error(`[${result!.ids.length} tokens, ${finishReason}, ${(result!.ids.length / seconds).toFixed(1)} tokens/s ` +
            `on ${used} (${runtime.info.device}); temperature ${temperature}, top-k ${topK}, top-p ${topP}, seed ${seed}]`);
        }
      } finally {
        await runtime.dispose();
      }
    }));

  model.command('score')
    .description('per-token log-probabilities of a text under the model')
    .requiredOption('--model <dir>', 'model folder')
    .requiredOption('--text <text>', 'text to score (special tokens such as <|im_end|> are single tokens)')
    .option('--backend <name>', COMPUTE_HELP)
    .option('--json', 'print JSON')
    .action(run(async (flags: ScoreFlags) => {
      const dir = modelDir(flags.model);
      const { runtime, backend: used } = await openModel(dir, flags.backend, 'score', { rows: 1, tokens: Buffer.byteLength(flags.text) });
      const tokenizer = runtime.tokenizer;
      try {
        checkVocabulary(tokenizer, flags.text, '--text');
        const ids = tokenizer.encode(flags.text);
        if (ids.length < 2) fail(`--text: needs at least 2 tokens to score (the first token has no prefix), got ${ids.length}`);
        if (ids.length > runtime.config.max_position_embeddings) fail(`--text: ${ids.length} tokens exceed the model's context ` +
          `of ${runtime.config.max_position_embeddings}`);
        const [stat] = await runtime.tokenStats([{ ids }], false);
        const logprobs = stat!.logprobs.map((x, i) => (i === 0 ? null : x));   // the first token has no prefix
        const scored = logprobs.slice(1) as number[];
        const total = scored.reduce((a, b) => a + b, 0);
        const tokens = ids.map((id, i) => ({
          id,
          token: tokenizer.decode([id]),
          piece: tokenizer.idToToken(id) ?? null,
          logprob: logprobs[i] === null ? null : round(logprobs[i]!, 5),
        }));
        const result = {
          model: dir,
          backend: used,
          tokens,
          totalLogprob: round(total, 5),
          meanLogprob: round(total / scored.length, 5),
          perplexity: round(Math.exp(-total / scored.length), 4),
        };
        if (flags.json) { console.log(JSON.stringify(result, null, 2)); return; }
        for (const t of tokens) {
          const logprob = t.logprob === null ? '      -' : t.logprob.toFixed(4);
          console.log(`${String(t.id).padStart(7)}  ${JSON.stringify(t.piece ?? t.token).padEnd(16)} ${logprob}`);
        }
        console.log(`total ${result.totalLogprob}, mean ${result.meanLogprob}, perplexity ${result.perplexity} over ${scored.length} tokens ` +
          `(${used})`);
      } finally {
        await runtime.dispose();
      }
    }));
  model.command('export')
    .description('re-save a model folder as a checkpoint: another dtype, LoRA adapters merged, sharded HF folders as one file')
    .requiredOption('--model <dir>', 'model folder (checkpoint or Hugging Face Qwen2 folder)')
    .requiredOption('--out <dir>', 'folder to write (must not exist or be empty, unless --force)')
    .option('--dtype <dtype>', 'weight dtype: f32 (default), f16 or bf16')
    .option('--merge-lora', 'fold LoRA adapters into the base weights (no adapter files)')
    .option('--force', 'overwrite an existing folder')
    .option('--backend <name>', COMPUTE_HELP)
    .option('--json', 'print the manifest as JSON')
    .action(run(async (flags: ExportFlags) => {
      const dir = modelDir(flags.model);
      const dtype = (flags.dtype ?? 'f32').toUpperCase();
      if (dtype !== 'F32' && dtype !== 'F16' && dtype !== 'BF16') fail(`--dtype: expected f32, f16 or bf16, received ${JSON.stringify(flags.dtype)}`);
      const out = checkOut(flags.out, flags.force);
      if (out === dir) fail('--out: must differ from --model');
      const { readManifest, saveCheckpoint } = await import('../model/checkpoint.js');
      const { runtime, backend: used } = await openModel(dir, flags.backend, 'export', { rows: 0, tokens: 0 });
      const manifestIn = await readManifest(dir);
      const { inspectHfFolder } = await import('../model/hf-load.js');
      const generation = (await inspectHfFolder(dir)).generation ?? undefined;
      const manifestOut = {
        parent: dir, step: manifestIn?.step ?? 0, stage: manifestIn?.stage ?? 'import', metrics: manifestIn?.metrics ?? {},
        extra: { exportedFrom: dir, dtype, mergedLora: flags.mergeLora ?? false, backend: used },
      };
      try {
        const { TorchRuntime } = await import('../model/torch/runtime.js');
        if (runtime instanceof TorchRuntime) {
          if (flags.mergeLora && runtime.lora) fail('--merge-lora: the torch backend writes LoRA adapters beside the base weights; ' +
            'merge them on TF.js (--backend wasm or cpu) or export without --merge-lora');
          await runtime.exportTo(out, manifestOut, { dtype: dtype.toLowerCase() as 'f32' | 'f16' | 'bf16', generation });
        } else {
          const { TfjsRuntime } = await import('../model/runtime.js');
          if (!(runtime instanceof TfjsRuntime)) fail(`model export: unexpected runtime on backend ${used}`);
          await saveCheckpoint(out, {
            model: runtime.model, tokenizer: runtime.tokenizer, dtype, mergeLora: flags.mergeLora ?? false, generation, manifest: manifestOut,
          });
        }
        const manifest = await readManifest(out);
        if (!manifest) fail(`--out: ${out} was written without a manifest`);
        if (flags.json) { console.log(JSON.stringify(manifest, null, 2)); return; }
        console.log(`wrote ${out}: ${(manifest.weights.parameters / 1e6).toFixed(3)}M parameters as ${dtype}${flags.mergeLora ? ', LoRA merged' : ''}, ` +
          `${(manifest.weights.bytes / 1e6).toFixed(2)} MB, sha256 ${manifest.weights.sha256.slice(0, 16)}… (${used})`);
      } finally {
        await runtime.dispose();
      }
    }));

  model.command('import')
    .description('turn a llama-architecture GGUF file (F32, F16, BF16, Q8_0, Q4_0, Q4_1) into a Hugging Face folder: config.json, ' +
      'model.safetensors (quantised tensors dequantised to F32), tokenizer.json, tokenizer_config.json with its chat template, generation_config.json')
    .argument('<file>', 'the .gguf file (e.g. SmolLM2-135M-Instruct.Q4_1.gguf)')
    .requiredOption('--out <dir>', 'folder to write (must not exist or be empty, unless --force)')
    .option('--force', 'replace an existing model folder')
    .option('--json', 'print the result as JSON')
    .action(run(async (fileArg: string, flags: ImportFlags) => {
      const file = resolve(fileArg);
      if (!existsSync(file) || !statSync(file).isFile()) fail(`<file>: ${file} is not a file; expected a .gguf file`);
      const out = checkOut(flags.out, flags.force);
      const { importGguf } = await import('../model/gguf.js');
      const { cleanImportLeftovers } = await import('../storage/temp-files.js');
      const result = await importGguf(file, out, { force: existsSync(out), onProgress: flags.json ? undefined : (m) => console.error(m),
        cleanLeftovers: (dir) => cleanImportLeftovers(dir).messages });
      if (flags.json) { console.log(JSON.stringify(result, null, 2)); return; }
      const c = result.config;
      console.log(`wrote ${out}: LlamaForCausalLM, ${(result.parameters / 1e6).toFixed(3)}M parameters, ${c.num_hidden_layers} layers x ${c.hidden_size}, ` +
        `heads ${c.num_attention_heads} (kv ${c.num_key_value_heads}), vocab ${c.vocab_size}, tied embeddings ${c.tie_word_embeddings}; ` +
        `tensors ${Object.entries(result.tensorTypes).map(([t, n]) => `${n} ${t}`).join(', ')}; ${(result.bytes / 1e6).toFixed(1)} MB safetensors`);
    }));
}
