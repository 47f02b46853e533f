// The watcher of a project held by other processes follows each new holder: after one CLI run
// ends, the next process that takes the lock is watched, and Stop signals that one (not the first,
// dead one); with no holder left, Stop says why it cannot stop. The holders here are child
// processes that write the lock file as `spa-workbench run` does.
import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { createDispatcher, type Dispatcher } from '../../core/host/dispatcher.js';
import { bootId, LOCK_FILE, processStartTime } from '../../core/storage/lock.js';
import { diagConfig, isolateHome, tempDir, waitFor } from '../api/helpers.js';
import { stopChild } from '../lib/child-exit.js';

const open: Dispatcher[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await stopChild(c, 'SIGKILL');   // exited before the next test (issue 37 item 7)
  for (const d of open.splice(0)) await d.dispose({ kill: true });
});

/**
 * A stand-in for a CLI run: it holds the lock until SIGINT, then writes `marker` and exits. Its script is named
 * spa-workbench.mjs and the lock carries its start time and boot id, as `spa-workbench run` writes it: Stop signals
 * only a verified workbench CLI (issue 37 N12).
 */
async function holder(dir: string, marker: string): Promise<ChildProcess> {
  const code = `import { writeFileSync } from 'node:fs';
process.on('SIGINT', () => { writeFileSync(${JSON.stringify(marker)}, 'stopped'); process.exit(0); }); setInterval(() => {}, 1000);
process.stdout.write('ready\\n');`;
  const script = path.join(path.dirname(marker), `h-${path.basename(marker)}`, 'spa-workbench.mjs');
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.writeFileSync(script, code);
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise((resolve) => child.stdout!.once('data', resolve));   // its SIGINT handler is installed: a Stop cannot race its start
  const lock = { pid: child.pid, host: os.hostname(), startedAt: Date.now(), token: `t${child.pid}`, purpose: 'cli run',
    procStart: processStartTime(child.pid!), bootId: bootId() };
  fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(lock));
  return child;
}

function markRunning(dir: string, runId: string): void {
  const file = path.join(dir, 'runs', runId, 'run.json');
  const run = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, JSON.stringify({ ...run, status: 'running', updatedAt: Date.now() }));
}

describe('watching a project whose holder changes', () => {
  it('follows each new holder; Stop reaches the current one, or says why not', async () => {
    isolateHome();
    const dir = path.join(tempDir(), 'proj');
    const owner = createDispatcher({ host: 'cli', lockPurpose: 'cli' });
    await owner.api.projects.create({ path: dir });
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await owner.api.runs.create({ config: diagConfig({ 'diag-wait': { steps: 5 } }, `r${i}`) }));
    await owner.dispose();

    const first = await holder(dir, path.join(dir, 'first.stopped'));
    const watcher = createDispatcher({ host: 'serve', lockPurpose: 'serve', watchWhenLocked: true });
    open.push(watcher);
    const info = await watcher.api.projects.open({ path: dir });
    expect(info.readOnly).toBe(true);
    expect(info.holder?.pid).toBe(first.pid);

    for (let i = 0; i < 3; i++) {
      const current = i === 0 ? first : await holder(dir, path.join(dir, `h${i}.stopped`));
      await waitFor(`holder ${i} followed`, async () => (await watcher.api.projects.info()).project?.holder?.pid === current.pid, 10_000);
      const now = (await watcher.api.projects.info()).project!;
      expect(now.holder).toMatchObject({ pid: current.pid, canStop: true });
      expect(now.warnings.some((w) => /no longer holds/.test(w))).toBe(false);
      markRunning(dir, runs[i]!.id);
      if (i < 2) {
        // the run ends by itself; its process exits and releases the lock
        current.kill('SIGKILL');
        await new Promise((r) => current.once('exit', r));
        fs.rmSync(path.join(dir, LOCK_FILE), { force: true });
        await waitFor('the holder-gone notice', async () =>
          (await watcher.api.projects.info()).project?.warnings.some((w) => new RegExp(`process ${current.pid} no longer holds`).test(w)), 10_000);
        // a run left marked running with no holder: Stop says why it cannot stop it
        await expect(watcher.api.runs.stop({ runId: runs[i]!.id })).rejects.toThrow(/no process holds the project any more/);
      } else {
        // the third holder's run is stopped from the UI: the signal reaches this process, not a dead one
        await watcher.api.runs.stop({ runId: runs[i]!.id });
        await waitFor('the third holder got SIGINT', () => fs.existsSync(path.join(dir, 'h2.stopped')), 10_000);
      }
    }
  }, 180_000);
});
