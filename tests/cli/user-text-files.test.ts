// Issue 37 item 6: the text files a user hands the CLI (a Sokoban level for `env render --level`, a template JSON for
// `--template FILE`) are read as users write them: a UTF-8 byte-order mark, CRLF endings and no final newline give
// the same render as the plain file (core/util/regular-file.ts readRegularTextSync; before, the BOM stayed in the first
// level row and in the JSON text). One CLI start per form, with the level and the template together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { builtinTemplate } from '../../core/prompts/resolve-template.js';

const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));
let tmp = '';
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'user-text-')); });
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

function render(level: string, template: string): { code: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(tmp, 'case-'));
  fs.writeFileSync(path.join(dir, 'level.txt'), level);
  fs.writeFileSync(path.join(dir, 'template.json'), template);
  const r = spawnSync(process.execPath, [bin, 'env', 'render', '--env', 'sokoban', '--level', path.join(dir, 'level.txt'),
    '--template', path.join(dir, 'template.json')], { encoding: 'utf8', env: { ...process.env, SPA_WORKBENCH_HOME: path.join(tmp, 'home') }, timeout: 300_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('CLI text files as users write them', () => {
  it('a level and a template with a BOM, CRLF and no final newline render as the plain files', () => {
    const level = '#######\n#  .  #\n# $@  #\n#######\n';
    const template = `${JSON.stringify(builtinTemplate('grid-coordinates'), null, 2)}\n`;
    const plain = render(level, template);
    expect(plain.code, plain.out).toBe(0);
    expect(plain.out).toContain('#######');
    const crlf = (t: string) => t.replace(/\n/g, '\r\n').replace(/\r\n$/, '');
    expect(render(`\ufeff${crlf(level)}`, `\ufeff${crlf(template)}`)).toEqual(plain);
  }, 700_000);
});
