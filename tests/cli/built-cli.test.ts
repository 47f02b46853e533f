// The built CLI (build/build-cli.mjs → dist-cli/, used by bin/spa-workbench.mjs while current)
// answers as the sources through tsx do, including commands that find files relative to their
// source (resources/bases) and load TF.js on demand; a build is current only while every source
// it read is unchanged (bin/cli-build.mjs), and an out-of-date one is never used.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '../api/helpers.js';
// @ts-expect-error a plain .mjs module of bin/ (no types)
import { currentBuild } from '../../bin/cli-build.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = path.join(root, 'bin', 'spa-workbench.mjs');

function cli(args: string[], mode: 'built' | 'source'): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { env: { ...process.env, SPA_WORKBENCH_CLI: mode, NO_COLOR: '1' }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('the built CLI', () => {
  it('builds, and answers --help, base show and a bad option as the sources do', () => {
    const b = spawnSync(process.execPath, [path.join(root, 'build', 'build-cli.mjs')], { encoding: 'utf8', timeout: 120_000 });
    expect(b.status, b.stderr).toBe(0);
    // another build may be under way (the lock): wait for a current manifest either way
    const state = currentBuild(pathToFileURL(root + path.sep));
    expect(state.why, 'the build is current right after building').toBeUndefined();
    for (const args of [['--help'], ['base', 'show'], ['list', '--project']]) {
      const built = cli(args, 'built');
      const source = cli(args, 'source');
      expect(built.code, `${args.join(' ')}: ${built.err}`).toBe(source.code);
      expect(built.out).toBe(source.out);
      expect(built.err).toBe(source.err);
    }
    expect(cli(['base', 'show'], 'built').out).toMatch(/frozenlake.*\n[\s\S]*files intact/);
  }, 300_000);

  it('is current only while every source it read is unchanged', () => {
    const dir = tempDir('spa-cli-build-');
    const url = pathToFileURL(dir + path.sep);
    expect(currentBuild(url).why).toBe('no dist-cli/manifest.json');
    fs.mkdirSync(path.join(dir, 'dist-cli'));
    fs.mkdirSync(path.join(dir, 'core'));
    const src = path.join(dir, 'core', 'a.ts');
    fs.writeFileSync(src, 'export const a = 1;\n');
    const st = fs.statSync(src);
    const write = (m: unknown) => fs.writeFileSync(path.join(dir, 'dist-cli', 'manifest.json'), JSON.stringify(m));
    write({ entry: 'main-X.js', inputs: { 'core/a.ts': [st.size, st.mtimeMs] } });
    expect(currentBuild(url).url.href).toBe(`${url.href}dist-cli/main-X.js`);
    write({ entry: 'main-X.js', inputs: { 'core/a.ts': [st.size, st.mtimeMs - 1000] } });
    expect(currentBuild(url).why).toBe('core/a.ts changed since the build');
    write({ entry: 'main-X.js', inputs: { 'core/gone.ts': [1, 1] } });
    expect(currentBuild(url).why).toBe('core/gone.ts is gone');
    write({ inputs: {} });
    expect(currentBuild(url).why).toBe('dist-cli/manifest.json is not a build manifest');
  });

  it('SPA_WORKBENCH_CLI=built refuses an out-of-date build by name instead of running it', () => {
    const dir = tempDir('spa-cli-stale-');
    fs.mkdirSync(path.join(dir, 'bin'));
    for (const f of ['spa-workbench.mjs', 'cli-build.mjs']) fs.copyFileSync(path.join(root, 'bin', f), path.join(dir, 'bin', f));
    fs.mkdirSync(path.join(dir, 'dist-cli'));
    fs.writeFileSync(path.join(dir, 'dist-cli', 'manifest.json'), JSON.stringify({ entry: 'main-X.js', inputs: { 'core/cli/main.ts': [1, 1] } }));
    const r = spawnSync(process.execPath, [path.join(dir, 'bin', 'spa-workbench.mjs'), '--help'], {
      env: { ...process.env, SPA_WORKBENCH_CLI: 'built' }, encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('the build is not current (core/cli/main.ts is gone); run: node build/build-cli.mjs');
  });
});
