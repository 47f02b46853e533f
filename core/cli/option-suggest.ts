// A mistyped option gets "(Did you mean --project?)". Commander checks required options before
// unknown ones, so `list --projct p` used to say only "required option '--project <dir>' not
// specified". This checks the leaf command's long options first and reports the unknown one
// through commander (which adds the suggestion).
import type { Command } from 'commander';

/** The first `--long` flag in args that the command does not define (null when all are known). */
export function firstUnknownOption(cmd: Command, args: ReadonlyArray<string>): string | null {
  const known = new Set<string>(['--help']);
  for (const o of cmd.options) { if (o.long) known.add(o.long); if (o.negate && o.long) known.add(o.long.replace(/^--no-/, '--')); }
  for (let c: Command | null = cmd.parent; c; c = c.parent) for (const o of c.options) if (o.long) known.add(o.long);
  for (const a of args) {
    if (a === '--') break;
    if (!a.startsWith('--')) continue;
    const flag = a.split('=')[0]!;
    if (!known.has(flag)) return flag;
  }
  return null;
}

/** Install on every command with subcommands: before a leaf command parses, report an unknown option with a suggestion. */
export function suggestUnknownOptions(program: Command): void {
  const install = (cmd: Command) => {
    if (cmd.commands.length === 0) return;
    cmd.hook('preSubcommand', (_this, sub) => {
      if (sub.commands.length > 0) return;                      // its own hook checks the leaf
      const at = process.argv.indexOf(sub.name());
      const flag = firstUnknownOption(sub, process.argv.slice(at + 1));
      // commander's own report (with its "Did you mean"); public in its JS, not in its typings
      if (flag) (sub as unknown as { unknownOption(flag: string): never }).unknownOption(flag);
    });
    for (const c of cmd.commands) install(c);
  };
  install(program);
}
