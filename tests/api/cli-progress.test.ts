// The `run` progress display (core/cli/core-commands.ts): plain lines when not on a terminal.
import { describe, expect, it } from 'vitest';
import { progressReporter } from '../../core/cli/core-commands.js';
import type { WorkbenchEvent } from '../../core/api/contract.js';

describe('run progress display', () => {
  it('shows an info line once, however many stages log it; warnings and stage changes always', () => {
    let out = '';
    const r = progressReporter({ write: (t: string) => { out += t; return true; }, isTTY: false, columns: 80 } as never);
    const log = (level: 'info' | 'warn', message: string): WorkbenchEvent => ({ kind: 'run', runId: 'r', event: { type: 'log', runId: 'r', time: 1, level, message } });
    const stage = (name: string): WorkbenchEvent => ({ kind: 'run', runId: 'r', event: { type: 'stage', runId: 'r', time: 1, stage: name, status: 'running' } } as WorkbenchEvent);
    for (const s of ['bootstrap', 'selfplay', 'sft']) {
      r.event(stage(s));
      r.event(log('info', 'TF.js backend: wasm (simd=true)'));
      r.event(log('warn', 'something odd'));
    }
    r.done();
    expect(out.match(/info: TF\.js backend/g)).toHaveLength(1);
    expect(out.match(/warn: something odd/g)).toHaveLength(3);
    expect(out).toContain('[sft] running');
  });
});
