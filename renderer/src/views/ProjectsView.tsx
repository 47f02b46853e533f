// Projects: create a new project folder, open an existing one, or pick a recent one. In the
// desktop app folders come from the native dialog; in browser mode from a path field.
import { useCallback, useEffect, useState } from 'react';
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
            <label className="field">
              <span className="label">Folder</span>
              <div className="row">
                <input type="text" className="grow" value={createPath} onChange={(e) => setCreatePath(e.target.value)}
                  placeholder="/home/me/spa-projects/sokoban-study" data-testid="create-path" aria-label="New project folder"
                  onKeyDown={(e) => { if (e.key === 'Enter') create(createPath); }} />
                {desktop && <button className="btn" onClick={() => void pick(true)} disabled={busy}>Choose…</button>}
              </div>
              <span className="field-help">Must be empty or not exist yet; it is created.</span>
            </label>
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
            <label className="field">
              <span className="label">Folder</span>
              <div className="row">
                <input type="text" className="grow" value={openPath} onChange={(e) => setOpenPath(e.target.value)}
                  placeholder="/home/me/spa-projects/sokoban-study" data-testid="open-path" aria-label="Project folder to open"
                  onKeyDown={(e) => { if (e.key === 'Enter') open(openPath); }} />
                {desktop && <button className="btn" onClick={() => void pick(false)} disabled={busy}>Browse…</button>}
              </div>
            </label>
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
