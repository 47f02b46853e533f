// reportCommandError (core/cli/action.ts): the one error report of the commands the API runs in a
// child process (`probe`, `template perplexity`): JSON on stdout with --json, a line on stderr, exit code 1.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkbenchError } from '../../core/api/errors.js';
import { reportCommandError, usageFail } from '../../core/cli/action.js';

function capture(fn: () => void): { stdout: string; stderr: string; exitCode: typeof process.exitCode } {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { stdout += String(chunk); return true; });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { stderr += String(chunk); return true; });
  const saved = process.exitCode;
  try {
    fn();
    return { stdout, stderr, exitCode: process.exitCode };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = saved;
  }
}

afterEach(() => vi.restoreAllMocks());

describe('reportCommandError', () => {
  it('prints a usage error as a ValidationError with the command as where', () => {
    let thrown: unknown;
    try { usageFail('--samples: expected an integer from 1 to 256, received "many"'); } catch (e) { thrown = e; }
    const r = capture(() => reportCommandError(thrown, true, 'template perplexity'));
    expect(JSON.parse(r.stdout)).toEqual({
      error: { name: 'ValidationError', message: '--samples: expected an integer from 1 to 256, received "many"', details: { where: 'template perplexity' } },
    });
    expect(r.stderr).toBe('error: --samples: expected an integer from 1 to 256, received "many"\n');
    expect(r.exitCode).toBe(1);
  });

  it("keeps a WorkbenchError's name and details, and lists its validation issues on stderr", () => {
    const e = new WorkbenchError('ValidationError', 'the template does not validate', {
      where: 'template', issues: [{ path: 'state', message: 'unknown variable' }, { path: 'system', message: 'empty' }],
    });
    const r = capture(() => reportCommandError(e, true, 'probe'));
    const body = JSON.parse(r.stdout) as { error: { name: string; details: { where: string } } };
    expect(body.error.name).toBe('ValidationError');
    expect(body.error.details.where).toBe('template');
    expect(r.stderr).toBe('error: the template does not validate\n  - state: unknown variable\n  - system: empty\n');
  });

  it('prints nothing on stdout without --json, and names a plain error by its name', () => {
    const r = capture(() => reportCommandError(new TypeError('bad'), false, 'probe'));
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: bad\n');
    const j = capture(() => reportCommandError(new TypeError('bad'), true, 'probe'));
    expect(JSON.parse(j.stdout)).toEqual({ error: { name: 'TypeError', message: 'bad', details: { where: 'probe' } } });
  });
});
