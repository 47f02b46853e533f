// The engine is forked into a session of its own, which on Linux with sched_autogroup is a scheduling group of its own:
// without core/engine/autogroup-nice.ts a host started under `nice -n 15` had an engine that competed at full weight with
// every other session (two study streams under nice 15 took the same CPU as two at nice 0). The engine now gives its group
// the nice it inherited.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { applyNiceToAutogroup } from '../../core/engine/autogroup-nice.js';
import { tempDir } from '../api/helpers.js';

const children: ChildProcess[] = [];
afterEach(() => { for (const c of children.splice(0)) c.kill('SIGKILL'); });

describe('applyNiceToAutogroup', () => {
  it('writes the nice value into a group whose nice is lower, and leaves everything else alone', () => {
    const dir = tempDir();
    const file = path.join(dir, 'autogroup');
    fs.writeFileSync(file, '/autogroup-12 nice 0\n');
    expect(applyNiceToAutogroup(file, 7)).toEqual({ outcome: 'set', nice: 7 });
    expect(fs.readFileSync(file, 'utf8')).toBe('7');
    fs.writeFileSync(file, '/autogroup-12 nice 9\n');
    expect(applyNiceToAutogroup(file, 7).outcome).toBe('already');     // never lowers a group's nice
    expect(fs.readFileSync(file, 'utf8')).toBe('/autogroup-12 nice 9\n');
    expect(applyNiceToAutogroup(file, 0).outcome).toBe('nice 0');       // a process at nice 0 changes nothing
    expect(applyNiceToAutogroup(path.join(dir, 'missing'), 5).outcome).toBe('no autogroup');
    fs.writeFileSync(file, 'something else');
    expect(applyNiceToAutogroup(file, 5).outcome).toBe('no autogroup');
  });
});

const hasAutogroup = process.platform === 'linux' && fs.existsSync('/proc/self/autogroup') &&
  fs.existsSync('/usr/bin/nice') && fs.existsSync('/usr/bin/setsid');

describe.runIf(hasAutogroup)('the engine process under a niced host', () => {
  it('runs in a scheduling group with the host\'s nice value', async () => {
    // a host started as `nice -n 11 ...` in a session of its own launches an engine (NodeProcessLauncher, as serve and the
    // CLI do) and prints the engine's pid once it is ready; the engine's own group must then read nice 11
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const launcher = pathToFileURL(path.resolve('core/engine/node-launcher.ts')).href;
    const script = `import { NodeProcessLauncher } from ${JSON.stringify(launcher)};
      const engine = new NodeProcessLauncher().launch({ runId: 'autogroup-test' });
      engine.onMessage((m) => { if (m.type === 'ready') process.stdout.write(String(m.pid) + '\\n'); });
      setInterval(() => {}, 1000);`;
    const host = spawn('/usr/bin/setsid', ['/usr/bin/nice', '-n', '11', process.execPath, '--import', tsx, '--input-type=module', '-e', script],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(host);
    let err = '';
    host.stderr!.on('data', (d) => { err += String(d); });
    const pid = await new Promise<number>((resolve, reject) => {
      let out = '';
      host.stdout!.on('data', (d) => { out += String(d); const m = /^(\d+)\n/.exec(out); if (m) resolve(Number(m[1])); });
      host.once('exit', (code) => reject(new Error(`host exited (${code}) before its engine was ready: ${err}`)));
    });
    try {
      const group = fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8');
      const hostGroup = fs.readFileSync(`/proc/${host.pid}/autogroup`, 'utf8');
      expect(group.split(' ')[0]).not.toBe(hostGroup.split(' ')[0]);   // the engine is in a group of its own (a session of its own)
      expect(group).toMatch(/ nice 11\s*$/);
    } finally {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  }, 60_000);
});
