// Projects: create a new project folder, open an existing one, or pick a recent one. In the
// desktop app folders come from the native dialog; in browser mode from a path field.
import { useCallback, useEffect, useState, type ReactElement } from 'react';
import type { ProjectInfo, RecentProject } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';
import { bridge } from '../api/connect.js';
import { ErrorBanner, KeyValues } from '../components/widgets.js';
import { fmtDate } from '../components/format.js';

export interface ProjectsViewProps {
  client: Client;
  project: ProjectInfo | null;
  onOpened: (project: ProjectInfo) => void;
  notice?: string;
}

export default function ProjectsView({ client, project, onOpened, notice }: ProjectsViewProps) {
  const [recent, setRecent] = useState<RecentProject[] | null>(null);
  const [createPath, setCreatePath] = useState('');
  const [createName, setCreateName] = useState('');
  const [openPath, setOpenPath] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const desktop = bridge();

  const refresh = useCallback(() => {
    client.projects.recent().then((r) => setRecent(r.projects), setError);
  }, [client]);
  useEffect(refresh, [refresh, project?.path]);

  const act = async (fn: () => Promise<ProjectInfo>) => {
    setBusy(true);
    setError(null);
    try {
      const p = await fn();
      refresh();
      onOpened(p);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const create = (path: string) => {
    if (!path.trim()) { setError({ name: 'InputError', message: 'Enter the folder for the new project.', details: { expected: 'an absolute path to an empty or absent folder', received: 'nothing' } }); return; }
    void act(() => client.projects.create({ path: path.trim(), ...(createName.trim() ? { name: createName.trim() } : {}) }));
  };
  const open = (path: string) => {
    if (!path.trim()) { setError({ name: 'InputError', message: 'Enter the folder of an existing project.', details: { expected: 'an absolute path to a project folder (it contains workbench.json)', received: 'nothing' } }); return; }
    void act(() => client.projects.open({ path: path.trim() }));
  };
  const pick = async (forNew: boolean) => {
    if (!desktop) return;
    const path = await desktop.dialogs.openFolder(forNew ? { title: 'New project: choose an empty folder', create: true } : { title: 'Open project folder' });
    if (!path) return;
    if (forNew) { setCreatePath(path); create(path); } else { setOpenPath(path); open(path); }
  };

  return (
    <div data-testid="projects-view">
      <h1>Projects</h1>
      {notice && <div className="banner info">{notice}</div>}
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {project && (
        <div className="card" data-testid="open-project-card">
          <h2>Open project: {project.name}</h2>
          <KeyValues items={[
            ['folder', <span className="mono" key="p">{project.path}</span>],
            ['runs', String(project.runCount)],
            ['created', fmtDate(project.createdAt)],
            ['schema', `v${project.schemaVersion}`],
          ]} />
          {project.warnings.length > 0 && (
            <div className="banner warn" style={{ marginTop: 10 }}>
              <div className="title">Recovered on open</div>
              <div className="details">{project.warnings.join('\n')}</div>
            </div>
          )}
        </div>
      )}
      <div className="grid-2" style={{ marginTop: 12 }}>
        <div className="card">
          <h2>New project</h2>
          <p className="muted" style={{ marginTop: 0 }}>A project is a folder: runs, templates, rollouts and checkpoints live inside it. Nothing leaves your machine.</p>
          <div className="col">
            <FolderField value={createPath} onChange={setCreatePath} onEnter={() => create(createPath)} testId="create-path" ariaLabel="New project folder"
              pick={desktop ? { label: 'Choose…', onClick: () => void pick(true) } : null} busy={busy} help="Must be empty or not exist yet; it is created." />
            <label className="field">
              <span className="label">Name (optional)</span>
              <input type="text" value={createName} onChange={(e) => setCreateName(e.target.value)} placeholder="defaults to the folder name" data-testid="create-name" />
            </label>
            <div><button className="btn primary" onClick={() => create(createPath)} disabled={busy} data-testid="create-project">Create project</button></div>
          </div>
        </div>
        <div className="card">
          <h2>Open project</h2>
          <p className="muted" style={{ marginTop: 0 }}>Open a folder that contains a workbench.json.</p>
          <div className="col">
            <FolderField value={openPath} onChange={setOpenPath} onEnter={() => open(openPath)} testId="open-path" ariaLabel="Project folder to open"
              pick={desktop ? { label: 'Browse…', onClick: () => void pick(false) } : null} busy={busy} />
            <div><button className="btn" onClick={() => open(openPath)} disabled={busy} data-testid="open-project">Open project</button></div>
          </div>
        </div>
      </div>
      <div className="card" style={{ marginTop: 12 }}>
        <h2>Recent</h2>
        {recent === null ? <div className="muted">Loading…</div> : recent.length === 0 ? <div className="muted">No recent projects.</div> : (
          <ul className="list" data-testid="recent-list">
            {recent.map((r) => (
              <li key={r.path} data-testid="recent-item" className={r.exists ? '' : 'faint'}>
                <div className="grow">
                  <div><strong>{r.name}</strong>{project?.path === r.path && <span className="badge running" style={{ marginLeft: 8 }}>open</span>}</div>
                  <div className="mono faint">{r.path}{r.exists ? '' : ' (folder missing)'}</div>
                </div>
                <span className="faint">{fmtDate(r.openedAt)}</span>
                <button className="btn small" disabled={!r.exists || busy || project?.path === r.path} onClick={() => open(r.path)}>Open</button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

interface FolderFieldProps {
  value: string;
  onChange(value: string): void;
  onEnter(): void;
  testId: string;
  ariaLabel: string;
  /** The desktop app's folder picker button, or null in browser mode. */
  pick: { label: string; onClick(): void } | null;
  busy: boolean;
  help?: string;
}

/** A folder path typed in (Enter submits), with the desktop app's folder picker beside it. */
function FolderField({ value, onChange, onEnter, testId, ariaLabel, pick, busy, help }: FolderFieldProps): ReactElement {
  return (
    <label className="field">
      <span className="label">Folder</span>
      <div className="row">
        <input type="text" className="grow" value={value} onChange={(e) => onChange(e.target.value)}
          placeholder="/home/me/spa-projects/sokoban-study" data-testid={testId} aria-label={ariaLabel}
          onKeyDown={(e) => { if (e.key === 'Enter') onEnter(); }} />
        {pick && <button className="btn" onClick={pick.onClick} disabled={busy}>{pick.label}</button>}
      </div>
      {help && <span className="field-help">{help}</span>}
    </label>
  );
}
