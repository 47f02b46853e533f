// Ctrl-C in a terminal signals the whole foreground process group. The CLI (run, resume) must
// then stop the run gracefully (status stopped, resumable), not let the signal kill the engine
// child mid-step (status failed). `npm start` adds a second SIGINT right after the first (npm
// forwards it to its child): that is still one key press.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir, waitFor } from '../api/helpers.js';
import { interruptHandler } from '../../core/cli/interrupt.js';

const bin = fileURLToPath(new URL('../../bin/spa-workbench.mjs', import.meta.url));

/** Start the CLI as a terminal would: its own process group, which a Ctrl-C signals as a whole. */
function startInGroup(args: string[], home: string) {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, SPA_WORKBENCH_HOME: home }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => out, exited, ctrlC: () => process.kill(-child.pid!, 'SIGINT') };
}

function runRecord(project: string): { id: string; status: string; reason: string | null; stages: { name: string; status: string; done: number }[] } {
  const runs = fs.readdirSync(path.join(project, 'runs'));
  return JSON.parse(fs.readFileSync(path.join(project, 'runs', runs[0]!, 'run.json'), 'utf8'));
}

describe('Ctrl-C in the terminal', () => {
  it('run: one Ctrl-C (even delivered twice, as under npm) stops the run gracefully; resume continues it and stops the same way', async () => {
    const home = tempDir();
    const project = path.join(tempDir(), 'proj');
    const slow = ['--set', 'stages.diag-wait.steps=2000', '--set', 'stages.diag-wait.delayMs=25'];
    const run = startInGroup(['run', 'diagnostic', '--size', 'smoke', '--project', project, ...slow], home);
    await waitFor('progress of the run', () => /diag-wait: \d+\/2000/.test(run.output()), 60_000);
    run.ctrlC();
    run.ctrlC();                                    // npm's forwarded copy of the same key press
    expect(await run.exited).toBe(130);
    const stopped = runRecord(project);
    expect(stopped.status, run.output()).toBe('stopped');
    expect(stopped.reason).toBe('stopped by the user');
    expect(run.output()).toContain('stopping after the current step');
    const doneAtStop = stopped.stages.find((s) => s.name === 'diag-wait')!.done;
    expect(doneAtStop).toBeGreaterThan(0);

    const resumed = startInGroup(['resume', stopped.id, '--project', project], home);
    await waitFor('progress after resuming', () => resumed.output().includes(`resuming after step`) && /diag-wait: \d+\/2000/.test(resumed.output()), 60_000);
    resumed.ctrlC();
    expect(await resumed.exited).toBe(130);
    const again = runRecord(project);
    expect(again.status, resumed.output()).toBe('stopped');
    expect(again.stages.find((s) => s.name === 'diag-wait')!.done).toBeGreaterThanOrEqual(doneAtStop);
  }, 180_000);
});

describe('interruptHandler', () => {
  it('first press stops, a repeat of the same press is ignored, a later press kills (once)', () => {
    let t = 0;
    const calls: string[] = [];
    const h = interruptHandler({ stop: () => calls.push('stop'), kill: () => calls.push('kill'), sameKeyMs: 1000, now: () => t });
    h();
    t = 5; h();                                     // npm's forwarded copy
    expect(calls).toEqual(['stop']);
    t = 3000; h();
    t = 3001; h();
    expect(calls).toEqual(['stop', 'kill']);
  });
});
