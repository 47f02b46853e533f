// Shared plumbing for subcommands that throw on bad input: `usageFail` raises a UsageError and
// `runAction` turns any thrown error into one `error: …` line on stderr and exit code 1.

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
