// `spa-workbench model init|info|generate|score`, run in-process through commander.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelCli } from '../lib/model-cli.js';

const cli = modelCli;

describe('model CLI', () => {
  afterEach(() => { process.exitCode = 0; });

  it('init → info → generate → score on a tiny model', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'cli-')), 'tiny');
    const init = await cli('model', 'init', '--preset', 'tiny', '--out', dir, '--seed', '2', '--json');
    expect(init.code).toBe(0);
    expect(JSON.parse(init.out)).toMatchObject({ stage: 'init', step: 0, parent: null });

    const info = JSON.parse((await cli('model', 'info', dir, '--json')).out);
    expect(info.config).toMatchObject({ hidden_size: 128, num_hidden_layers: 4, tie_word_embeddings: true });
    expect(info.tokenizer).toMatchObject({ kind: 'char', chatStyle: 'compact' });
    expect(info.manifest.sha256).toMatch(/^[0-9a-f]{64}$/);

    const args = ['model', 'generate', '--model', dir, '--prompt', '#_P√#', '--chat', '--max-new-tokens', '12', '--seed', '5', '--json'];
    const g1 = JSON.parse((await cli(...args)).out);
    const g2 = JSON.parse((await cli(...args)).out);
    expect(g1.tokens.length).toBeGreaterThan(0);
    expect(g1.tokens.length).toBeLessThanOrEqual(12);
    expect(g2.tokens).toEqual(g1.tokens);                              // seeded
    expect(g1.logprobs.every((x: number) => x <= 0)).toBe(true);

    const score = JSON.parse((await cli('model', 'score', '--model', dir, '--text', '<answer>Up</answer>', '--json')).out);
    expect(score.tokens.map((t: { token: string }) => t.token)).toEqual(['<answer>', 'U', 'p', '</answer>']);
    expect(score.tokens[0].logprob).toBeNull();
    expect(score.tokens.slice(1).every((t: { logprob: number }) => t.logprob < 0)).toBe(true);
    const sum = score.tokens.slice(1).reduce((a: number, t: { logprob: number }) => a + t.logprob, 0);
    expect(score.totalLogprob).toBeCloseTo(sum, 3);

    const exported = join(dir, '..', 'bf16');
    const exp = await cli('model', 'export', '--model', dir, '--out', exported, '--dtype', 'bf16', '--json');
    expect(exp.code).toBe(0);
    expect(JSON.parse(exp.out)).toMatchObject({ parent: dir, weights: { dtype: 'BF16' } });
    expect(JSON.parse((await cli('model', 'info', exported, '--json')).out).weights.dtypes).toEqual({ BF16: info.weights.dtypes.F32 });
    expect((await cli('model', 'export', '--model', dir, '--out', exported, '--dtype', 'int8')).err).toMatch(/--dtype: expected f32, f16 or bf16, received "int8"/);

    const again = await cli('model', 'init', '--preset', 'tiny', '--out', dir);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/--out: .* is not empty; choose a new folder or pass --force/);
  });

  it('gives clear errors for bad flags and folders', async () => {
    expect((await cli('model', 'init', '--preset', 'huge', '--out', '/tmp/x')).err).toMatch(/--preset: expected one of tiny, small, base, received "huge"/);
    expect((await cli('model', 'generate', '--model', '/nonexistent', '--prompt', 'x')).err).toMatch(/--model: folder \/nonexistent does not exist/);
    const fixture = join(import.meta.dirname, '../fixtures/model/parity/qwen2-f32');
    expect((await cli('model', 'generate', '--model', fixture, '--prompt', 'x', '--temperature', '-1')).err).toMatch(/--temperature: expected a number >= 0, received "-1"/);
    expect((await cli('model', 'score', '--model', fixture, '--text', 'a')).err).toMatch(/--text: needs at least 2 tokens/);
    const info = await cli('model', 'info', tmpdir());
    expect(info.code).toBe(1);
    expect(info.err).toMatch(/config\.json: missing config\.json/);
  });
});
