// SPA/RAGEN interop in the UI (issue 14): "Export for SPA/RAGEN…" in the Run view (a bundle
// folder; the files written, what could not be carried over, and which model the cluster should
// use) and "Import run…" in the Runs view (a SPA/RAGEN output folder becomes a read-only run).
// In the desktop app the folder can be picked with the native dialog; in browser mode it is typed.
import { useState } from 'react';
import type { ExportBundleResult, ImportRunResult } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import { bridge } from '../api/connect.js';
import { ErrorBanner } from './widgets.js';

function FolderInput(props: { value: string; onChange(v: string): void; onEnter(): void; testId: string; label: string; placeholder: string; pickTitle: string; create?: boolean; busy: boolean }) {
  const desktop = bridge();
  const pick = async () => {
    if (!desktop) return;
    const path = await desktop.dialogs.openFolder({ title: props.pickTitle, ...(props.create ? { create: true } : {}) });
    if (path) props.onChange(path);
  };
  return (
    <label className="field interop-field">
      <span className="label">{props.label}</span>
      <div className="row">
        <input type="text" className="grow mono" value={props.value} onChange={(e) => props.onChange(e.target.value)} placeholder={props.placeholder}
          aria-label={props.label} data-testid={props.testId} onKeyDown={(e) => { if (e.key === 'Enter') props.onEnter(); }} />
        {desktop && <button className="btn" disabled={props.busy} onClick={() => void pick()}>Choose…</button>}
      </div>
    </label>
  );
}

/** The bundle's warnings less the one that repeats the model note (shown above them). */
export function otherWarnings(r: ExportBundleResult): string[] {
  const note = r.model.note.trim().replace(/\.$/, '');
  return r.warnings.filter((w) => !(note && w.includes(note)));
}

const emptyPath = (what: string, expected: string) => ({ name: 'InputError', message: `Enter ${what}.`, details: { expected, received: 'nothing' } });

export function ExportBundlePanel(props: { client: Client; runId: string; onClose(): void }) {
  const [out, setOut] = useState('');
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<ExportBundleResult | null>(null);
  const submit = async () => {
    if (!out.trim()) { setError(emptyPath('the folder to write the bundle to', 'an absolute path outside the project (a new folder)')); return; }
    setBusy(true); setError(null); setResult(null);
    try {
      setResult(await props.client.runs.exportBundle({ runId: props.runId, to: 'spa-ragen', out: out.trim(), ...(model.trim() ? { model: model.trim() } : {}) }));
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return (
    <div className="card" data-testid="export-bundle-panel" style={{ marginBottom: 12 }}>
      <div className="row"><h2 style={{ margin: 0 }}>Export for SPA/RAGEN</h2><span className="grow" /><button className="btn small ghost" onClick={props.onClose} aria-label="close export">✕</button></div>
      <p className="muted" style={{ fontSize: 13 }}>
        A bundle that runs this experiment at scale with SPA’s released recipe (RAGEN on verl): the self-play SFT data as parquet, a Hydra config
        on RAGEN’s keys, the env, a launch script (SFT then PPO) and the pinned stack. See docs/scale-out.md.
      </p>
      <FolderInput value={out} onChange={setOut} onEnter={() => void submit()} testId="export-out" label="Bundle folder (new, outside the project)"
        placeholder="/home/me/cluster/spa-bundle" pickTitle="Export bundle: choose a new folder" create busy={busy} />
      <FolderInput value={model} onChange={setModel} onEnter={() => void submit()} testId="export-model" label="Model folder (optional: an HF model to name instead)"
        placeholder="leave empty: the run's checkpoint, or the named base model" pickTitle="Model folder" busy={busy} />
      <div className="row" style={{ marginTop: 8 }}>
        <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="export-submit">{busy ? 'Exporting…' : 'Export bundle'}</button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {result && (
        <div data-testid="export-result" style={{ marginTop: 10 }}>
          <div className="banner info">
            <div className="title">Bundle written to <span className="mono">{result.dir}</span></div>
            <div className="details" data-testid="export-next">On the cluster: <span className="mono">{result.dir}/launch.sh --ragen /path/to/RAGEN --gpus N</span> (SFT, then PPO from the SFT checkpoint; see README.md in the bundle)</div>
          </div>
          <div className="field" style={{ marginTop: 8 }}><span className="label">Model for the cluster ({result.model.kind === 'base' ? 'a named base model' : result.model.kind})</span>
            <div className="mono" data-testid="export-model-path">{result.model.path}</div>
            <div className="muted" data-testid="export-model-note">{result.model.note}</div>
          </div>
          {otherWarnings(result).length > 0 && (
            <div className="banner warn" data-testid="export-warnings">
              <div className="title">Not carried over ({otherWarnings(result).length})</div>
              <ul style={{ margin: '4px 0 0 18px', padding: 0 }}>{otherWarnings(result).map((w) => <li key={w}>{w}</li>)}</ul>
            </div>
          )}
          <details open>
            <summary className="muted">{result.files.length} files written</summary>
            <ul className="mono file-list" data-testid="export-files">{result.files.map((f) => <li key={f}>{f}</li>)}</ul>
          </details>
        </div>
      )}
    </div>
  );
}

export function ImportRunPanel(props: { client: Client; onImported(result: ImportRunResult): void; onClose(): void }) {
  const [path, setPath] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async () => {
    if (!path.trim()) { setError(emptyPath('the SPA/RAGEN output folder to import', 'a folder with recorder JSONL, raw_trajectories_*.json, verl metrics or a W&B table')); return; }
    setBusy(true); setError(null);
    try {
      props.onImported(await props.client.runs.import({ path: path.trim(), ...(name.trim() ? { name: name.trim() } : {}) }));
    } catch (e) { setError(e); } finally { setBusy(false); }
  };
  return (
    <div className="card" data-testid="import-run-panel" style={{ marginBottom: 12 }}>
      <div className="row"><h2 style={{ margin: 0 }}>Import a SPA/RAGEN run</h2><span className="grow" /><button className="btn small ghost" onClick={props.onClose} aria-label="close import">✕</button></div>
      <p className="muted" style={{ fontSize: 13 }}>
        The folder’s recorder JSONL (best: turn by turn), stage-1 <span className="mono">raw_trajectories_*.json</span> and <span className="mono">wm_*.parquet</span>,
        verl’s metrics JSONL and a W&B <span className="mono">val/generations</span> table become a read-only run (status “imported”). Nothing is half-imported.
      </p>
      <FolderInput value={path} onChange={setPath} onEnter={() => void submit()} testId="import-path" label="SPA/RAGEN output folder"
        placeholder="/data/ragen/outputs/exp1" pickTitle="Import: choose a SPA/RAGEN output folder" busy={busy} />
      <label className="field interop-field">
        <span className="label">Name (optional)</span>
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} placeholder="the folder name" data-testid="import-name" aria-label="Imported run name" />
      </label>
      <div className="row" style={{ marginTop: 8 }}>
        <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="import-submit">{busy ? 'Importing…' : 'Import run'}</button>
      </div>
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
    </div>
  );
}

/** One line saying what an import read, for the notice shown on the imported run. */
export function importSummary(r: ImportRunResult): string {
  const read = r.sources.map((s) => `${s.file} (${s.kind}, ${s.count})`).join(', ');
  return `Imported from ${read || 'no files'}${r.skipped.length ? `; skipped ${r.skipped.length}` : ''}${r.warnings.length ? `; ${r.warnings.length} warning${r.warnings.length === 1 ? '' : 's'}` : ''}.`;
}

const IMPORT_KEY = (runId: string) => `spa-workbench.import.${runId}`;

/** Keep what an import read for the imported run's view to show once (this tab only). */
export function rememberImport(r: ImportRunResult): void {
  try { sessionStorage.setItem(IMPORT_KEY(r.run.id), JSON.stringify(r)); } catch { /* storage disabled: no notice */ }
}

/** What the import of this run read, if it was imported in this tab. */
export function recalledImport(runId: string): ImportRunResult | null {
  try {
    const raw = sessionStorage.getItem(IMPORT_KEY(runId));
    return raw ? JSON.parse(raw) as ImportRunResult : null;
  } catch { return null; }
}

export function forgetImport(runId: string): void {
  try { sessionStorage.removeItem(IMPORT_KEY(runId)); } catch { /* nothing to forget */ }
}
