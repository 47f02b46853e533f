// Shared plumbing for subcommands that throw on bad input: `usageFail` raises a UsageError and
// `runAction` turns any thrown error into one `error: …` line on stderr and exit code 1;
// `reportCommandError` does the same for the commands the API runs in a child process
// (`probe`, `template perplexity`), which with --json also print the error as JSON on stdout.

export function usageFail(message: string): never {
  const error = new Error(message);
  error.name = 'UsageError';
  throw error;
}

export function runAction(action: (...args: any[]) => void | Promise<void>) {
  return async (...args: any[]) => {
    try {
      await action(...args);
    } catch (e) {
      console.error(`error: ${(e as Error).message}`);
      process.exitCode = 1;
    }
  };
}

/** The API error name of a thrown error: a usage error is a ValidationError; a capitalised `code` (WorkbenchError's) wins over `name`. */
function apiErrorName(e: (Error & { code?: unknown }) | undefined): string {
  if (e?.name === 'UsageError') return 'ValidationError';
  if (typeof e?.code === 'string' && /^[A-Z]/.test(e.code)) return e.code;
  return e?.name ?? 'Error';
}

/**
 * One failure of a command, printed for people (`error: …` on stderr, with up to 10 validation issues) and, with `json`, for
 * programs: `{ "error": { name, message, details } }` on stdout (details default to `{ where }`). Sets exit code 1.
 */
export function reportCommandError(err: unknown, json: boolean | undefined, where: string): void {
  const e = err as (Error & { code?: string; details?: Record<string, unknown> }) | undefined;
  const message = e?.message ?? String(err);
  if (json) process.stdout.write(`${JSON.stringify({ error: { name: apiErrorName(e), message, details: e?.details ?? { where } } }, null, 2)}\n`);
  const issues = Array.isArray(e?.details?.issues)
    ? (e.details.issues as Array<{ path: string; message: string }>).slice(0, 10).map((i) => `\n  - ${i.path}: ${i.message}`).join('')
    : '';
  process.stderr.write(`error: ${message}${issues}\n`);
  process.exitCode = 1;
}
