// templates.perplexity runs TF.js, which must never run on the host's event loop (the Electron
// main process or the server must keep answering). So the dispatcher runs
// `spa-workbench template perplexity … --json` in a child process (Node hosts: the same Node
// binary; Electron: a utilityProcess of the bundled dist-electron/template-perplexity.js, so the
// RunAsNode fuse can stay off); the shared ChildRunner (child-runner.ts) gives it the timeout, the
// one-at-a-time rule and the error mapping.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { repoRoot } from './system-info.js';
import { ChildRunner, nodeChildHandle, type ChildHandle } from './child-runner.js';

export interface PerplexityChildRequest {
  project: string;
  runId: string;
  checkpoint?: string;
  env: { id: string; options: Record<string, unknown> };
  template: { source: string } | { name: string; hash?: string };
  samples: number;
  seedStart?: number;
  timeoutMs: number;
}

/** The argv of the command (after the node binary): exported for tests and docs. */
export function perplexityArgs(req: PerplexityChildRequest): string[] {
  const bin = path.join(repoRoot, 'bin', 'spa-workbench.mjs');
  const t = req.template;
  return [
    bin, 'template', 'perplexity', `--project=${req.project}`, `--run=${req.runId}`, `--env=${req.env.id}`,
    `--config=${JSON.stringify(req.env.options)}`, `--samples=${req.samples}`,
    ...(req.checkpoint ? [`--checkpoint=${req.checkpoint}`] : []),
    ...(req.seedStart !== undefined ? [`--seed-start=${req.seedStart}`] : []),
    ...('source' in t ? ['--template-file=-'] : [`--template=${t.hash ? `${t.name}@${t.hash}` : t.name}`]),
    '--json',
  ];
}

/** A started perplexity process, whatever starts it (a Node child process, an Electron utilityProcess). */
export type PerplexityChild = ChildHandle;

/**
 * Starts `template perplexity <args>`; `args` are the command's arguments after "perplexity". The
 * template text of an unsaved template is in a file named by --template-file (never on stdin, which
 * an Electron utilityProcess does not offer).
 */
export type PerplexityLauncher = (args: string[]) => PerplexityChild;

/** Node hosts (serve, CLI, tests): the same Node binary runs bin/spa-workbench.mjs. */
export const nodePerplexityLauncher: PerplexityLauncher = (args) =>
  nodeChildHandle(spawn(process.execPath, [path.join(repoRoot, 'bin', 'spa-workbench.mjs'), 'template', 'perplexity', ...args], {
    cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true,
  }));

/** Runs perplexity children; at most one at a time per host; `killAll` on dispose. */
export class PerplexityRunner {
  private readonly runner = new ChildRunner({ running: 'another perplexity computation', expected: 'one computation at a time' });

  constructor(private readonly launch: PerplexityLauncher = nodePerplexityLauncher) {}

  get active(): number { return this.runner.active; }

  killAll(): void { this.runner.killAll(); }

  run(req: PerplexityChildRequest, where = 'templates.perplexity'): Promise<Record<string, unknown>> {
    // the text of an unsaved template goes through a private temp file, written when the child starts and removed when it ends
    let templateFile: string | null = null;
    let args = perplexityArgs(req).slice(3);
    const start = () => {
      if ('source' in req.template) {
        templateFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spa-perplexity-')), `template-${randomBytes(4).toString('hex')}.json`);
        fs.writeFileSync(templateFile, req.template.source, { mode: 0o600 });
        args = args.map((a) => (a === '--template-file=-' ? `--template-file=${templateFile}` : a));
      }
      return this.launch(args);
    };
    return this.runner.run({
      start,
      timeoutMs: req.timeoutMs,
      where,
      name: 'the perplexity process',
      onTimeout: 'the computation was stopped (try fewer samples or a larger timeoutSeconds)',
      maxStdout: 4_000_000,
      crashDetails: { command: `spa-workbench template perplexity ${args.slice(0, 2).join(' ')} …` },
      cleanup: () => { if (templateFile) fs.rmSync(path.dirname(templateFile), { recursive: true, force: true }); },
    });
  }
}
