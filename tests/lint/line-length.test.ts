// No line in core/ longer than 160 characters (issue 9). Counted in characters (code points), not bytes,
// so a rule of box-drawing characters is as long as it looks.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAX_LINE = 160;

/** Every source file under `dir`, as paths relative to `base` with forward slashes. */
function sourceFiles(base: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(base, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(base, rel));
    else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name)) out.push(rel);
  }
  return out;
}

/** `file:line (N characters)` for each line over `max` characters in the source files under base/dir, skipping the `skip` prefixes. */
function longLines(base: string, dir: string, max: number, skip: string[]): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(base, dir).sort()) {
    if (skip.some((prefix) => file.startsWith(prefix))) continue;
    readFileSync(join(base, file), 'utf8').split(/\r?\n/).forEach((line, i) => {
      const length = [...line].length;
      if (length > max) found.push(`${file}:${i + 1} (${length} characters)`);
    });
  }
  return found;
}

describe('line length in core/', () => {
  it(`has no line over ${MAX_LINE} characters anywhere in core/`, () => {
    const offenders = longLines(root, 'core', MAX_LINE, []);
    expect(offenders, `lines over ${MAX_LINE} characters; wrap them:\n${offenders.join('\n')}`).toEqual([]);
  });

  it('reports a planted long line with its file and line, and counts characters rather than bytes', () => {
    const base = mkdtempSync(join(tmpdir(), 'line-length-'));
    try {
      mkdirSync(join(base, 'core', 'envs'), { recursive: true });
      mkdirSync(join(base, 'core', 'model'), { recursive: true });
      const long = `export const message = '${'x'.repeat(MAX_LINE)}';`;
      writeFileSync(join(base, 'core', 'envs', 'planted.ts'), `// fine\n${long}\nexport const ok = 1;\n`);
      writeFileSync(join(base, 'core', 'envs', 'rule.ts'), `// ${'─'.repeat(MAX_LINE - 3)}\n`); // 160 characters, 478 bytes
      writeFileSync(join(base, 'core', 'model', 'skipped.ts'), `${long}\n`);
      expect(longLines(base, 'core', MAX_LINE, ['core/model/'])).toEqual([`core/envs/planted.ts:2 (${[...long].length} characters)`]);
      expect(longLines(base, 'core', MAX_LINE, [])).toHaveLength(2);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

