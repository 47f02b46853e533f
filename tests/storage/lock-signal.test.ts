// Issue 37 item 5, N12 of the fault retest (../shared/reference/reliability-retest-2.md H11): a `.workbench.lock`
// planted in a project, naming any live process of this host as a "cli run", made Stop in serve send SIGINT to that
// process. Stop now signals only a process verified to be the lock's writer and a workbench CLI (lock.ts
// holderSignalProblem): the lock's start time and boot id match the live process, and its command line is the CLI's.
import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { bootId, holderSignalProblem, LOCK_FILE, processStartTime } from '../../core/storage/lock.js';
import { holderCanStop } from '../../core/storage/project-store.js';
import { diagConfig, isolateHome, tempDir } from '../api/helpers.js';
import { stopChild } from '../lib/child-exit.js';

const open: Dispatcher[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await stopChild(c, 'SIGKILL');
  for (const d of open.splice(0)) await d.dispose({ kill: true });
});

const HAS_PROC = fs.existsSync('/proc/self/stat');

/** A live process that writes `marker` if it ever gets SIGINT; its script file is named `name`. */
async function sleeper(dir: string, name: string, marker: string): Promise<ChildProcess> {
  const script = path.join(dir, `${path.basename(marker)}-bin`, name);
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.writeFileSync(script, `import { writeFileSync } from 'node:fs';
process.on('SIGINT', () => { writeFileSync(${JSON.stringify(marker)}, 'got SIGINT'); process.exit(0); });
setInterval(() => {}, 1000);
process.stdout.write('ready\\n');`);
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise((resolve) => child.stdout!.once('data', resolve));   // exec'd: its command line is the script's
  return child;
}

const lockOf = (child: ChildProcess, extra: Record<string, unknown> = {}) =>
  ({ pid: child.pid!, host: os.hostname(), startedAt: Date.now(), token: `t${child.pid}`, purpose: 'cli run', ...extra });

describe('who Stop may signal (N12)', () => {
  it('a lock naming an unrelated live process is refused: no start time, a wrong one, or a command line that is not the CLI', async () => {
    const dir = tempDir();
    const other = await sleeper(dir, 'python-sleeper.mjs', path.join(dir, 'other.sigint'));
    const cli = await sleeper(dir, 'spa-workbench.mjs', path.join(dir, 'cli.sigint'));
    const verified = { procStart: processStartTime(cli.pid!), bootId: bootId() };
    if (!HAS_PROC) {
      console.warn('\n*** no /proc here: holderSignalProblem falls back to pid and host (macOS, Windows); only that is checked ***\n');
      expect(holderSignalProblem(lockOf(other))).toBe(null);
      return;
    }
    expect(holderSignalProblem(lockOf(other))).toMatch(/lacks the process start time and boot id/);
    expect(holderCanStop(lockOf(other))).toBe(false);
    const planted = lockOf(other, { procStart: processStartTime(other.pid!), bootId: bootId() });   // copied from /proc by the planter
    expect(holderSignalProblem(planted)).toMatch(/is not a spa-workbench CLI process/);
    expect(holderSignalProblem(lockOf(cli, { ...verified, procStart: verified.procStart! - 1 }))).toMatch(/pid was reused/);
    expect(holderSignalProblem(lockOf(cli, { ...verified, bootId: 'another-boot' }))).toMatch(/earlier boot/);
    expect(holderSignalProblem(lockOf(cli, verified))).toBe(null);
    expect(holderCanStop(lockOf(cli, verified))).toBe(true);
  });

  it('serve: Stop on a project whose planted lock names a live unrelated process refuses, and the process gets no SIGINT', async () => {
    isolateHome();
    const dir = path.join(tempDir(), 'proj');
    const owner = createDispatcher({ host: 'cli', lockPurpose: 'cli' });
    await owner.api.projects.create({ path: dir });
    const run = await owner.api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 5 } }, 'r0') });
    await owner.dispose();
    const marker = path.join(dir, 'victim.sigint');
    const victim = await sleeper(dir, 'victim.mjs', marker);
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(lockOf(victim)));   // the planted lock of the retest (no procStart)
    const file = path.join(dir, 'runs', run.id, 'run.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), status: 'running' }));
    const watcher = createDispatcher({ host: 'serve', lockPurpose: 'serve', watchWhenLocked: true });
    open.push(watcher);
    const info = await watcher.api.projects.open({ path: dir });
    expect(info.holder?.pid).toBe(victim.pid);
    if (!HAS_PROC) return;
    expect(info.holder?.canStop).toBe(false);
    await expect(watcher.api.runs.stop({ runId: run.id })).rejects.toThrow(/stop it there/);
    await new Promise((r) => setTimeout(r, 300));
    expect(fs.existsSync(marker)).toBe(false);
    expect(victim.exitCode).toBe(null);
  }, 180_000);   // a hang guard (it starts several Node processes)
});
