// The README's `study table --records` line works as written (it once failed: the records' study is
// not named "study"): the test takes the line from README.md and runs it, with the output folder moved
// to a temp dir.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../api/helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = path.join(root, 'bin', 'spa-workbench.mjs');

describe('README: study table from the published records', () => {
  it('runs as written', () => {
    const line = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').find((l) => /^npx spa-workbench study table --records /.test(l));
    expect(line, 'the README line').toBeDefined();
    const args = line!.replace(/#.*$/, '').trim().split(/\s+/).slice(2);
    const out = path.join(tempDir(), 'table');
    const at = args.indexOf('--out');
    args[at + 1] = out;
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 240_000 });   // the chance/oracle rows take ~90 s on a loaded 2-core machine
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(out, 'table.md'))).toBe(true);
    expect(fs.readFileSync(path.join(out, 'table.md'), 'utf8')).toMatch(/frozenlake/i);
  }, 300_000);
});
