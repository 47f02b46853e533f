// system.importModel: `spa-workbench model import FILE --out DIR --json` in a child process, so the
// dequantising of a GGUF file (seconds to minutes, CPU-bound) never runs on the host's event loop.
// The New Run form offers it when a .gguf file is typed where a model folder belongs (issue 37
// item 4). At most one import at a time; the CLI's own errors (bad file, existing folder) come back
// as API errors through the shared ChildRunner.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkbenchError } from '../api/errors.js';
import { repoRoot } from './system-info.js';
import { ChildRunner, nodeChildHandle } from './child-runner.js';

/** Where an import writes by default: beside the file, named after it without `.gguf` (SmolLM2.Q4_1.gguf → SmolLM2.Q4_1). */
export function defaultImportFolder(file: string): string {
  return path.join(path.dirname(file), path.basename(file).replace(/\.gguf$/i, '') || 'model');
}

export interface ModelImportResult { folder: string; parameters: number; bytes: number; seconds: number; summary: string }

/** The argv of the command after the node binary (exported for tests). */
export function importArgs(file: string, out: string): string[] {
  return [path.join(repoRoot, 'bin', 'spa-workbench.mjs'), 'model', 'import', file, `--out=${out}`, '--json'];
}

export class ModelImportRunner {
  private readonly runner = new ChildRunner({ running: 'another model import', expected: 'one import at a time' });

  killAll(): void { this.runner.killAll(); }

  /** Import `file` (a .gguf file) into `out` (default: defaultImportFolder); refuses a missing file or an existing folder by name. */
  async run(req: { file: string; out?: string | undefined }, timeoutMs = 30 * 60_000): Promise<ModelImportResult> {
    const where = 'system.importModel';
    const file = path.resolve(req.file);
    let stat: fs.Stats;
    try { stat = fs.statSync(file); } catch {
      throw new WorkbenchError('NotFound', `${file} does not exist; expected a .gguf file`,
        { where: `${where} file`, expected: 'an existing .gguf file', received: file });
    }
    if (!stat.isFile() || !/\.gguf$/i.test(file)) {
      throw new WorkbenchError('ValidationError', `${file} is not a .gguf file`,
        { where: `${where} file`, expected: 'a file ending in .gguf', received: file });
    }
    const out = path.resolve(req.out ?? defaultImportFolder(file));
    if (fs.existsSync(out)) {
      throw new WorkbenchError('Conflict', `${out} already exists; choose another folder (or use it as the model folder if it is this model)`,
        { where: `${where} out`, expected: 'a folder that does not exist yet', received: out });
    }
    const started = Date.now();
    const args = importArgs(file, out);
    const result = await this.runner.run({
      start: () => nodeChildHandle(spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })),
      timeoutMs, where, name: 'the model import', onTimeout: 'the import was stopped', maxStdout: 1_000_000,
      crashDetails: { command: `spa-workbench model import ${file} --out ${out}` },
    });
    const parameters = typeof result['parameters'] === 'number' ? result['parameters'] : 0;
    const bytes = typeof result['bytes'] === 'number' ? result['bytes'] : 0;
    const config = (result['config'] ?? {}) as Record<string, unknown>;
    return {
      folder: typeof result['out'] === 'string' ? result['out'] : out, parameters, bytes, seconds: Math.round((Date.now() - started) / 100) / 10,
      summary: `${parameters >= 1e6 ? `${(parameters / 1e6).toFixed(1)}M` : parameters.toLocaleString('en-US')} parameters, ` +
        `${String(config['num_hidden_layers'] ?? '?')} layers × ${String(config['hidden_size'] ?? '?')}, vocab ${String(config['vocab_size'] ?? '?')}, ` +
        `${bytes >= 1e6 ? `${(bytes / 1e6).toFixed(0)} MB` : `${(bytes / 1e3).toFixed(0)} kB`} of safetensors`,
    };
  }
}
