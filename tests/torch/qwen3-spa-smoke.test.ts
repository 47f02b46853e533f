// A Qwen3 folder runs SPA (issue 35 item 2): a stand-in with Qwen3's architecture (q/k RMSNorm, head_dim != hidden / heads),
// tiny random weights, a byte-level BPE with <think>/</think> and Qwen3's own chat template completes a smoke SPA run on
// torch. Before the product laid Qwen3 chats out as verl does (core/model/chat.ts), the first SFT row with `</think>` in its
// reply stopped the run ("changes message contents"). The run's rows keep every turn verbatim (the layout is ChatML).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hfConfigToModelConfig } from '../../core/model/hf-load.js';
import { hfTensorSpecs } from '../../core/model/config.js';
import { writeSafetensors } from '../../core/model/safetensors.js';
import { loadTokenizer } from '../../core/model/tokenizer.js';
import { formatChat, templateLayout } from '../../core/model/chat.js';
import { probeTorch } from '../../core/model/torch/worker-client.js';
import { Rng } from '../../core/util/rng.js';
import { QWEN3_TEMPLATE } from '../model/chat-family-templates.js';
import { runPreset } from '../train/helpers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/model/parity/qwen2-f32/', import.meta.url));
const CONFIG = {
  architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', vocab_size: 300, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, max_position_embeddings: 4096, rope_theta: 1_000_000, rms_norm_eps: 1e-6,
  hidden_act: 'silu', attention_bias: false, tie_word_embeddings: false, bos_token_id: 280, eos_token_id: 282, torch_dtype: 'float32',
};

/** The stand-in Qwen3 folder: the fixture's BPE plus <think> (283) and </think> (284), Qwen3's chat template, random weights. */
async function writeQwen3Folder(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const tokenizer = JSON.parse(readFileSync(join(FIXTURE, 'tokenizer.json'), 'utf8')) as { added_tokens: Array<Record<string, unknown>>; model: { vocab: Record<string, number> } };
  for (const [id, content] of [[283, '<think>'], [284, '</think>']] as const) {
    tokenizer.added_tokens.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false });
  }
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  const tokenizerConfig = JSON.parse(readFileSync(join(FIXTURE, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...tokenizerConfig, chat_template: QWEN3_TEMPLATE }));
  copyFileSync(join(FIXTURE, 'generation_config.json'), join(dir, 'generation_config.json'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(CONFIG));
  const rng = new Rng(7);
  const tensors = new Map<string, { shape: number[]; read: () => Float32Array }>();
  for (const [name, shape] of hfTensorSpecs(hfConfigToModelConfig(CONFIG))) {
    const n = shape.reduce((a, b) => a * b, 1);
    tensors.set(name, { shape, read: () => Float32Array.from({ length: n }, () => (name.endsWith('norm.weight') ? 1 : (rng.next() - 0.5) * 0.04)) });
  }
  await writeSafetensors(join(dir, 'model.safetensors'), tensors);
}

const probe = probeTorch();
let root = '';
let dir = '';
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'qwen3-spa-'));
  dir = join(root, 'qwen3-standin');
  await writeQwen3Folder(dir);
}, 180_000);
afterAll(() => { if (root) rmSync(root, { recursive: true, force: true }); });

describe.skipIf(!probe.ok)('a Qwen3-template folder (tiny random weights)', () => {
  it('is laid out as ChatML with every turn verbatim', async () => {
    const tokenizer = await loadTokenizer(dir);
    expect(templateLayout(tokenizer)).toBe('chatml');
    const reply = '<think><observation>P_</observation></think><answer>Right</answer>';
    const chat = formatChat([{ role: 'user', content: 'State: P_' }, { role: 'assistant', content: reply }], tokenizer, { generationPrefix: '<think>' });
    expect(chat.text).toBe(`<|im_start|>user\nState: P_<|im_end|>\n<|im_start|>assistant\n${reply}<|im_end|>\n`);
    expect(chat.ids).toContain(283);   // <think> is one token
  });

  it('completes a smoke SPA run on torch', async () => {
    const project = join(root, 'project');
    const { outcome, runDir, stages } = await runPreset(project, 'spa', 'qwen3-smoke', {
      backend: 'torch', env: { id: 'frozenlake' },
      model: { source: 'hf-folder', path: dir, memory: { gradientCheckpointing: false, frozenDtype: 'f32' } },
      stages: { rl: { passAtKEvery: 0 }, eval: { puzzles: 1, samples: 1, k: [1], perplexityRows: 0 } },
    });
    expect(outcome).toEqual({ status: 'completed' });
    expect(stages).toContain('sft');
    for (const stage of stages) expect(existsSync(join(runDir, 'stages', stage, 'done.json')), `stage ${stage}`).toBe(true);
  }, 600_000);
});
if (!probe.ok) console.warn(`\n*** SKIPPED the Qwen3 SPA smoke run: PyTorch is not available (${probe.reason}) ***\n`);
