// Issue 37 item 5, N3 of the fault retest (../shared/reference/reliability-retest-2.md H8, H9, H10):
// the serve host reads <model.path>/config.json for runs.validateConfig (GPU sizes) and for
// runs.exportBundle's tensor-parallel check, and runs.estimate's memory estimate for a model folder. A FIFO named config.json froze the whole host until
// someone wrote to it, and a 200 MB one blocked it 2.4 s. These reads now go through
// core/util/regular-file.ts: special files are refused before open, files over 1 MiB are refused
// from their size. The FIFO guard (tests/storage/fifo-guard.ts) releases a blocked reader from a
// worker thread, so a regression fails the test instead of hanging it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { attentionHeads } from '../../core/interop/export-bundle.js';
import { FileTooLargeError, NotRegularFileError, readRegularFileSync, readRegularText, splitTextLines } from '../../core/util/regular-file.js';
import { fifoWithGuard } from './fifo-guard.js';

let tmp = '';
let d: Dispatcher;
beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'special-files-'));
  d = createDispatcher({ host: 'in-process' });
  await d.api.projects.create({ path: path.join(tmp, 'project') });
});
afterAll(async () => { await d?.dispose(); fs.rmSync(tmp, { recursive: true, force: true }); });

const QWEN_05B = { model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'], hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24,
  num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936, tie_word_embeddings: true };

function modelDir(name: string): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  return dir;
}

describe('config.json of model.path, read by the serve host (N3)', () => {
  it('a FIFO as config.json: runs.validateConfig answers without opening it', async () => {
    const dir = modelDir('fifo-model');
    const guard = fifoWithGuard(path.join(dir, 'config.json'));
    if (!guard) return;
    try {
      const r = await d.api.runs.validateConfig({ preset: 'spa', size: 'gpu-24g', set: { 'model.source': 'hf-folder', 'model.path': dir } });
      expect(r.config?.model.path).toBe(dir);
      expect(guard.released()).toBe(false);
    } finally { await guard.stop(); }
  }, 15_000);

  it('a FIFO as config.json: runs.estimate answers (no memory estimate) without opening it', async () => {
    const dir = modelDir('fifo-estimate');
    const guard = fifoWithGuard(path.join(dir, 'config.json'));
    if (!guard) return;
    try {
      const r = await d.api.runs.estimate({ preset: 'spa', size: 'gpu-24g', set: { 'model.source': 'hf-folder', 'model.path': dir } });
      expect(r.memory ?? null).toBe(null);
      expect(guard.released()).toBe(false);
    } finally { await guard.stop(); }
  }, 15_000);

  it('a FIFO as config.json: the bundle\'s attention-head lookup answers null without opening it', async () => {
    const dir = modelDir('fifo-export');
    const guard = fifoWithGuard(path.join(dir, 'config.json'));
    if (!guard) return;
    try {
      expect(attentionHeads(dir)).toBe(null);
      expect(guard.released()).toBe(false);
    } finally { await guard.stop(); }
  }, 15_000);

  it('a 2 MiB config.json is not read (the memory check is skipped as for an unreadable one); a real one still is', async () => {
    const big = modelDir('big');
    fs.writeFileSync(path.join(big, 'config.json'), JSON.stringify({ ...QWEN_05B, hidden_size: 10 ** 6, pad: 'x'.repeat(2 * 1024 ** 2) }));
    const bigIssues = await d.api.runs.validateConfig({ preset: 'spa', size: 'gpu-24g', set: { 'model.source': 'hf-folder', 'model.path': big } });
    expect(bigIssues.issues.filter((i) => /GiB/.test(i.message))).toEqual([]);
    expect(attentionHeads(big)).toBe(null);
    const small = modelDir('small');
    fs.writeFileSync(path.join(small, 'config.json'), JSON.stringify({ ...QWEN_05B, hidden_size: 10 ** 6 }));
    const smallIssues = await d.api.runs.validateConfig({ preset: 'spa', size: 'gpu-24g', set: { 'model.source': 'hf-folder', 'model.path': small } });
    expect(smallIssues.issues.map((i) => i.message).join('\n')).toMatch(/GiB/);   // the same check runs on a readable file
    expect(attentionHeads(small)).toBe(14);
  });
});

describe('core/util/regular-file.ts', () => {
  it('refuses a FIFO, a folder and /dev/zero by kind, and a large file by size, without reading', async () => {
    const guard = fifoWithGuard(path.join(tmp, 'pipe'));
    if (guard) {
      try {
        expect(() => readRegularFileSync(path.join(tmp, 'pipe'))).toThrow(NotRegularFileError);
        await expect(readRegularText(path.join(tmp, 'pipe'))).rejects.toThrow(/pipe: is a FIFO \(named pipe\), not a regular file/);
        expect(guard.released()).toBe(false);
      } finally { await guard.stop(); }
    }
    expect(() => readRegularFileSync(tmp)).toThrow(/is a folder/);
    if (fs.existsSync('/dev/zero')) expect(() => readRegularFileSync('/dev/zero')).toThrow(/is a character device/);
    fs.writeFileSync(path.join(tmp, 'big.txt'), 'x'.repeat(2048));
    expect(() => readRegularFileSync(path.join(tmp, 'big.txt'), { maxBytes: 1024, what: 'a test file' }))
      .toThrow(FileTooLargeError);
    fs.symlinkSync(path.join(tmp, 'big.txt'), path.join(tmp, 'link.txt'));
    expect(readRegularFileSync(path.join(tmp, 'link.txt')).length).toBe(2048);                      // links followed by default
    expect(() => readRegularFileSync(path.join(tmp, 'link.txt'), { followLinks: false })).toThrow(/is a symbolic link/);
  });

  it('user text: a BOM dropped, LF / CRLF / CR endings, a final newline or none', async () => {
    fs.writeFileSync(path.join(tmp, 'bom.txt'), '\ufeffa,b\r\n1,2\r\n');
    expect(await readRegularText(path.join(tmp, 'bom.txt'))).toBe('a,b\r\n1,2\r\n');
    for (const text of ['a\nb', 'a\nb\n', 'a\r\nb\r\n', '\ufeffa\r\nb', 'a\rb\r']) expect(splitTextLines(text), JSON.stringify(text)).toEqual(['a', 'b']);
    expect(splitTextLines('')).toEqual(['']);
    expect(splitTextLines('a\n\nb\n')).toEqual(['a', '', 'b']);
  });
});
