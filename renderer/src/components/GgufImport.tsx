// New Run, model folder field: a .gguf file is not a model folder (the run would fail 10 s after
// Start). This offers what the CLI does, `spa-workbench model import FILE --out DIR`, in place:
// the import runs in the host's child process (system.importModel) with its progress shown, and
// the folder it wrote is selected as the model folder (issue 37 item 4).
import { useEffect, useRef, useState } from 'react';
import type { Client } from '../api/client.js';
import { ErrorBanner, ProgressBar } from './widgets.js';

/** A path the model-folder field must not take: a GGUF file (by its extension). */
export function isGgufPath(p: unknown): p is string {
  return typeof p === 'string' && /\.gguf\s*$/i.test(p);
}

/** The folder an import writes by default (the host's rule, core/host/model-import-child.ts): beside the file, named after it. */
export function importFolderFor(file: string): string {
  return file.trim().replace(/\.gguf$/i, '');
}

export function GgufImport({ client, file, onImported }: { client: Client; file: string; onImported: (folder: string, note: string) => void }) {
  const [state, setState] = useState<{ kind: 'idle' } | { kind: 'running'; since: number } | { kind: 'done'; summary: string; seconds: number; folder: string } | { kind: 'error'; error: unknown }>({ kind: 'idle' });
  const [, tick] = useState(0);
  const mounted = useRef(true);
  useEffect(() => () => { mounted.current = false; }, []);
  useEffect(() => {
    if (state.kind !== 'running') return;
    const t = setInterval(() => tick((n) => n + 1), 500);
    return () => clearInterval(t);
  }, [state.kind]);
  const start = () => {
    setState({ kind: 'running', since: Date.now() });
    client.system.importModel({ file: file.trim() }).then((r) => {
      if (!mounted.current) return;
      setState({ kind: 'done', summary: r.summary, seconds: r.seconds, folder: r.folder });
      onImported(r.folder, `imported ${file.trim()} in ${r.seconds} s: ${r.summary}`);
    }, (error: unknown) => { if (mounted.current) setState({ kind: 'error', error }); });
  };
  return (
    <div className="banner warn" data-testid="gguf-import" style={{ marginTop: 6, gridColumn: '1 / -1' }}>
      <div className="title">This is a GGUF file, not a model folder</div>
      <div className="details">
        A run needs a Hugging Face folder (config.json, model.safetensors, tokenizer.json). Import the file into one:
        <span className="mono"> spa-workbench model import {file.trim()} --out {importFolderFor(file)}</span>, or here:
      </div>
      {state.kind === 'idle' && <button className="btn small primary" onClick={start} data-testid="gguf-import-start" title={`writes ${importFolderFor(file)}`}>Import into a model folder</button>}
      {state.kind === 'running' && (
        <div data-testid="gguf-import-progress">
          <ProgressBar done={0} total={0} status="running" label="model import" />
          <span className="faint">importing (dequantising the tensors)… {Math.round((Date.now() - state.since) / 1000)} s</span>
        </div>
      )}
      {state.kind === 'done' && <div className="ok" data-testid="gguf-import-done">Imported in {state.seconds} s: {state.summary}. The model folder is now {state.folder}.</div>}
      {state.kind === 'error' && <><ErrorBanner error={state.error} title="Model import" /><button className="btn small" onClick={start}>Try again</button></>}
    </div>
  );
}
