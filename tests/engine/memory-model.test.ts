// The memory model (core/engine/memory-model.ts, issue 20 item 6): hand-counted terms, the fit claims, agreement
// within 15% with every measurement in bench/results, and docs/compute.md's table equal to what the code gives.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CARD_USABLE, CUDA_PATH, ENGINE_MEASURED_MARGIN, fitsCard, layerBytesPerToken, LEGACY_CUDA_PATH, parameterCount, QWEN25_05B, QWEN25_15B, runPeak, shapeFromHfConfig, stagePeaks,
  type MemoryPlan,
} from '../../core/engine/memory-model.js';
import { BEGIN, END, engineRunChecks, measurementChecks, renderMemoryBlock, sizePlan, withMemoryBlock } from '../../core/engine/memory-model-doc.js';

const GIB = 1024 ** 3;
const ROOT = path.resolve(__dirname, '../..');

describe('memory model terms', () => {
  it('counts the published parameters of Qwen2.5-0.5B and 1.5B', () => {
    expect(parameterCount(QWEN25_05B)).toBe(494_032_768);
    expect(parameterCount(QWEN25_15B)).toBe(1_543_714_304);
    expect(shapeFromHfConfig({ model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14,
      num_key_value_heads: 2, vocab_size: 151936, tie_word_embeddings: true })).toMatchObject({ headDim: 64, kvHeads: 2, qkvBias: true, tied: true });
  });

  it('adds up the hand-counted terms of one training step', () => {
    // 0.5B under bf16 autocast: 52·896 + 4·(2·64) + 8·4864 = 86,016 bytes per token per layer
    expect(layerBytesPerToken(QWEN25_05B, CUDA_PATH)).toBe(86_016);
    const plan: MemoryPlan = {
      tokenBudget: 1000, rowTokens: 500, scoredFraction: 1, gradientCheckpointing: false, generationRows: 1, rolloutRows: 1, promptTokens: 1,
      newTokens: 1, lora: false, frozenBf16: true, criticMode: 'shared-trunk', klReference: false,
    };
    const P = 494_032_768;
    const sft = stagePeaks(QWEN25_05B, plan, LEGACY_CUDA_PATH).sft;
    // f32 weights, gradients, AdamW m and v (16 B/param), the bf16 casts (2), activations with the softmax probabilities
    // (6·14·500 per layer per token), the mask (1 byte per key), the full-vocabulary head (5·4·V per token), a CUDA context
    const layer = 52 * 896 + 4 * 14 * 64 + 8 * 4864 + 6 * 14 * 500;
    expect(sft.bytes).toBeCloseTo(18 * P + 1000 * 24 * layer + 1000 * 500 + 1000 * 20 * 151_936 + 0.5 * GIB, -1);
    // apply's peak (20 B/param: the divided and clipped gradient copies) wins once activations are small
    const tiny = stagePeaks(QWEN25_05B, { ...plan, tokenBudget: 1, rowTokens: 1 }, CUDA_PATH).sft;
    expect(tiny.bytes).toBeCloseTo(20 * P + 0.5 * GIB, -1);
  });

  it('the separate critic and the KL reference are resident beside the policy', () => {
    const plan = sizePlan('gpu-24g', false);
    const shared = stagePeaks(QWEN25_05B, { ...plan, criticMode: 'shared-trunk' }, CUDA_PATH);
    const separate = stagePeaks(QWEN25_05B, plan, CUDA_PATH);
    const P = parameterCount(QWEN25_05B);
    // separate: the critic's 12 B/param and its context, less the shared trunk's second AdamW slot (8 B/param)
    expect(separate.rlActor.bytes - shared.rlActor.bytes).toBeCloseTo(12 * P + 0.5 * GIB - 8 * P, -1);
    const withRef = stagePeaks(QWEN25_05B, { ...plan, klReference: true }, CUDA_PATH);
    expect(withRef.rlActor.bytes - separate.rlActor.bytes).toBeCloseTo(2 * P + 0.5 * GIB, -1);
    expect(separate.reference.bytes).toBe(0);
  });
});

describe('what fits (the issue: 0.5B full fine-tuning and 1.5B LoRA fit 24 GB)', () => {
  it('gpu-24g: 0.5B full fine-tuning and 1.5B LoRA fit a 24 GiB card; 1.5B full fine-tuning does not', () => {
    expect(fitsCard(runPeak(stagePeaks(QWEN25_05B, sizePlan('gpu-24g', false), CUDA_PATH)).bytes, 24)).toBe(true);
    expect(fitsCard(runPeak(stagePeaks(QWEN25_15B, sizePlan('gpu-24g', true), CUDA_PATH)).bytes, 24)).toBe(true);
    expect(fitsCard(runPeak(stagePeaks(QWEN25_15B, sizePlan('gpu-24g', false), CUDA_PATH)).bytes, 24)).toBe(false);
  });
  it("gpu-80g: the paper's 1.5B, fully fine-tuned with a separate critic, fits an 80 GiB card", () => {
    expect(fitsCard(runPeak(stagePeaks(QWEN25_15B, sizePlan('gpu-80g', false), CUDA_PATH)).bytes, 80)).toBe(true);
  });
});

describe('the model against the measurements', () => {
  it('agrees within 15% with every measurement in bench/results', () => {
    const checks = measurementChecks(ROOT);
    const deviceChecks = fs.readdirSync(path.join(ROOT, 'bench', 'results')).filter((f) => f.startsWith('torch-device-check') && f.endsWith('.json'));
    expect(deviceChecks.length).toBeGreaterThan(0);
    for (const f of deviceChecks) expect(checks.some((c) => c.file === `bench/results/${f}`)).toBe(true);   // none skipped
    for (const c of checks) {
      const ratio = c.modelBytes / c.measuredBytes;
      expect(Math.abs(ratio - 1), `${c.file}: ${c.what}: model ${(c.modelBytes / GIB).toFixed(2)} GiB, measured ${(c.measuredBytes / GIB).toFixed(2)} GiB`)
        .toBeLessThanOrEqual(0.15);
    }
  });

  it('a measurement the model disagrees with is caught (a planted H200 file with twice the peak)', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-memory-model-'));
    fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'bench', 'torch_device_check.py'), path.join(root, 'bench', 'torch_device_check.py'));
    const real = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench', 'results', 'torch-device-check-h200.json'), 'utf8'));
    real.throughput.cuda['qwen2.5-0.5b-like'].worker.peakGpuGiBAdded *= 2;
    fs.writeFileSync(path.join(root, 'bench', 'results', 'torch-device-check-planted.json'), JSON.stringify(real));
    const [check] = measurementChecks(root).filter((c) => c.what.includes('0.5b'));
    expect(Math.abs(check!.modelBytes / check!.measuredBytes - 1)).toBeGreaterThan(0.15);
  });
});

describe('the margin over the estimate (whole engine runs on a GPU)', () => {
  it('is at or above every measured / estimated ratio of bench/results/gpu-engine-run-*.json', () => {
    const checks = engineRunChecks(ROOT);
    expect(checks.length).toBeGreaterThan(0);
    for (const c of checks) expect(c.ratio, `${c.file} run ${c.run} ${c.stage}`).toBeLessThanOrEqual(ENGINE_MEASURED_MARGIN);
    expect(checks.some((c) => c.ratio > 1.15)).toBe(true);   // the reason the margin exists: the model alone under-counts
  });

  it('a run that measured more than the margin is caught (a planted file)', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spa-engine-run-'));
    fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
    const real = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench', 'results', 'gpu-engine-run-h200.json'), 'utf8'));
    real.summary.comparable = [{ run: 1, stage: 'sft', measuredGiB: 14 }];   // the model's SFT estimate for run 1 is 8.91 GiB
    fs.writeFileSync(path.join(root, 'bench', 'results', 'gpu-engine-run-planted.json'), JSON.stringify(real));
    const [check] = engineRunChecks(root);
    expect(check!.estimateGiB).toBeCloseTo(8.91, 1);   // recomputed from run 1's size and settings, not read from the file
    expect(check!.ratio).toBeGreaterThan(ENGINE_MEASURED_MARGIN);
    real.runs[0].cases[0].model = 'qwen25-7b';
    fs.writeFileSync(path.join(root, 'bench', 'results', 'gpu-engine-run-planted.json'), JSON.stringify(real));
    expect(() => engineRunChecks(root)).toThrow(/a run whose case names its size and model/);
    fs.writeFileSync(path.join(root, 'bench', 'results', 'gpu-engine-run-planted.json'), JSON.stringify({ summary: {} }));
    expect(() => engineRunChecks(root)).toThrow(/summary\.comparable is missing/);
  });

  it('a fit is judged on the estimate times the margin', () => {
    const limit = 24 * GIB * CARD_USABLE;
    expect(fitsCard(limit / ENGINE_MEASURED_MARGIN - 1e6, 24)).toBe(true);
    expect(fitsCard(limit / ENGINE_MEASURED_MARGIN + 1e6, 24)).toBe(false);
  });
});

describe('docs/compute.md', () => {
  it("holds the memory table the code gives (npx tsx core/engine/memory-model-doc.ts rewrites it)", () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'compute.md'), 'utf8');
    const block = doc.slice(doc.indexOf(BEGIN), doc.indexOf(END) + END.length);
    expect(block).toBe(renderMemoryBlock(ROOT));
    expect(withMemoryBlock(doc, renderMemoryBlock(ROOT))).toBe(doc);
  });
});
