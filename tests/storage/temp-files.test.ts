// D10: leftovers of interrupted writes (checkpoint temp folders, temp files, lock temp files) are
// cleaned when the project opens, a checkpoint swap cut between its two renames is restored, and
// nothing that belongs to a live writer or to finished data is touched.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProjectStore } from '../../core/storage/project-store.js';
import { findTempLeftovers } from '../../core/storage/temp-files.js';
import { isolateHome, tempDir } from '../api/helpers.js';

const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim());

describe('temp leftovers (D10)', () => {
  it('open removes stale temp folders and files, restores a cut swap, keeps a live writer\'s', async () => {
    isolateHome();
    const dir = tempDir();
    (await ProjectStore.create(dir)).close();
    const dead = deadPid();
    const ck = path.join(dir, 'runs', 'r1', 'checkpoints');
    fs.mkdirSync(path.join(ck, 'rl-4'), { recursive: true });
    fs.writeFileSync(path.join(ck, 'rl-4', 'config.json'), '{"done": true}');
    const tmpDir = path.join(ck, `.rl-5.tmp-${dead}-abc12`);                 // a checkpoint being written when the engine died
    fs.mkdirSync(tmpDir); fs.writeFileSync(path.join(tmpDir, 'model.safetensors'), Buffer.alloc(4096));
    const oldDir = path.join(ck, `.rl-3.old-${dead}-abc13`);                 // swap cut: rl-3 renamed away, new one never renamed in
    fs.mkdirSync(oldDir); fs.writeFileSync(path.join(oldDir, 'config.json'), '{"rl3": true}');
    const tmpFile = path.join(dir, 'runs', 'r1', `.run.json.tmp-${dead}-0a1b2c3d`);
    fs.writeFileSync(tmpFile, '{"half');
    const lockTmp = path.join(dir, `.workbench.lock.${dead}-0123456789abcdef.tmp`);
    fs.writeFileSync(lockTmp, '{}');
    const live = path.join(ck, `.rl-6.tmp-${process.pid}-abc14`);             // this process is still writing it
    fs.mkdirSync(live);

    expect(findTempLeftovers(dir).map((t) => [t.kind, t.action])).toEqual(expect.arrayContaining([['tmp', 'remove'], ['old', 'restore'], ['lock-tmp', 'remove'], ['tmp', 'keep']]));
    const s = await ProjectStore.open(dir);
    try {
      expect(fs.existsSync(tmpDir)).toBe(false);
      expect(fs.existsSync(tmpFile)).toBe(false);
      expect(fs.existsSync(lockTmp)).toBe(false);
      expect(fs.existsSync(live)).toBe(true);
      expect(fs.readFileSync(path.join(ck, 'rl-3', 'config.json'), 'utf8')).toBe('{"rl3": true}');
      expect(fs.readFileSync(path.join(ck, 'rl-4', 'config.json'), 'utf8')).toBe('{"done": true}');
      const w = s.warnings.join('\n');
      expect(w).toMatch(/removed 3 unfinished temp/);
      expect(w).toMatch(/restored the checkpoint runs\/r1\/checkpoints\/rl-3/);
    } finally { s.close(); }
  });
});
