// Fault injection for storage tests: make every write under a folder fail as on a read-only mount
// (EROFS) or a full disk (ENOSPC), without root or a real mount. Node's built-in ESM namespace is
// re-synced from the patched module object (syncBuiltinESMExports), so `import * as fs` sees it.
import fsDefault from 'node:fs';
import * as path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';

type Fn = (...args: unknown[]) => unknown;
const WRITE_FNS = ['writeFileSync', 'appendFileSync', 'mkdirSync', 'renameSync', 'linkSync', 'unlinkSync', 'rmSync', 'copyFileSync', 'cpSync', 'writeSync'] as const;

function fail(code: string, target: string): never {
  const e = new Error(`${code}: injected fault, ${target}`) as NodeJS.ErrnoException;
  e.code = code;
  throw e;
}

/** Run `fn` with writes under `root` failing with `code`; returns fn's result and restores fs. */
export async function withWriteFault<T>(root: string, code: 'EROFS' | 'ENOSPC', fn: () => Promise<T> | T, options: { except?: string[] } = {}): Promise<T> {
  const abs = path.resolve(root);
  const inside = (p: unknown) => typeof p === 'string' && (path.resolve(p) === abs || path.resolve(p).startsWith(abs + path.sep));
  const fsAny = fsDefault as unknown as Record<string, Fn>;
  const saved: Record<string, Fn> = {};
  const fds = new Set<number>();
  for (const name of WRITE_FNS) {
    if (options.except?.includes(name)) continue;
    const orig = fsAny[name]!;
    saved[name] = orig;
    fsAny[name] = function patched(this: unknown, ...args: unknown[]) {
      if (typeof args[0] === 'number' ? fds.has(args[0]) : inside(args[0]) || inside(args[1])) return fail(code, String(args[0]));
      return orig.apply(this, args);
    };
  }
  const openOrig = fsAny.openSync!;
  saved.openSync = openOrig;
  fsAny.openSync = function patched(this: unknown, ...args: unknown[]) {
    const flags = String(args[1] ?? 'r');
    if (inside(args[0]) && /[wa+]/.test(flags)) {
      if (code === 'EROFS') return fail(code, String(args[0]));
      const fd = openOrig.apply(this, args) as number;
      fds.add(fd);   // a full disk: opening works, writing fails
      return fd;
    }
    return openOrig.apply(this, args);
  };
  const promises = fsDefault.promises as unknown as Record<string, Fn>;
  const savedP: Record<string, Fn> = {};
  for (const name of ['writeFile', 'mkdir', 'rename', 'open', 'unlink', 'appendFile'] as const) {
    const orig = promises[name]!;
    savedP[name] = orig;
    promises[name] = async function patched(this: unknown, ...args: unknown[]) {
      const flags = name === 'open' ? String(args[1] ?? 'r') : 'w';
      if (inside(args[0]) && /[wa+]/.test(flags)) return fail(code, String(args[0]));
      return orig.apply(this, args);
    };
  }
  syncBuiltinESMExports();
  try {
    return await fn();
  } finally {
    Object.assign(fsAny, saved);
    Object.assign(promises, savedP);
    syncBuiltinESMExports();
  }
}
