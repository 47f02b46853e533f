// The app frame: top bar (project, connection, theme), side navigation, the routed view, and a
// status bar (transport, host, compute backend). Routes live in the URL hash (routes.ts).
// The "seeing" views (trace, replay, templates, datasets) are loaded lazily if their files
// exist (import.meta.glob), so the frame builds before and after they land.
import { isProbing, statusBackend } from './status-backend.js';
import { Suspense, lazy, useCallback, useEffect, useMemo, useState, type ComponentType, type LazyExoticComponent } from 'react';
import type { ProjectInfo, SystemInfo, WorkbenchEvent } from '../../core/api/contract.js';
import type { Client, ConnectionState } from './api/client.js';
import { bridge } from './api/connect.js';
import type { MenuCommand } from '../../electron/bridge.js';
import { NAV_SECTIONS, formatRoute, parseRoute, routeRunId, type Route, type ViewProps } from './routes.js';
import { applyTheme, initialTheme, type ThemeName } from './theme/theme.js';
import { ErrorBanner } from './components/widgets.js';
import ProjectsView from './views/ProjectsView.js';
import RunsView from './views/RunsView.js';
import NewRunView from './views/NewRunView.js';
import RunView from './views/RunView.js';
import CompareView from './views/CompareView.js';
import StudiesView from './views/StudiesView.js';

type ViewModule = { default: ComponentType<ViewProps> };
const seeingViews = import.meta.glob<ViewModule>([
  './views/TraceView.tsx', './views/ReplayView.tsx', './views/TemplatesView.tsx', './views/DatasetView.tsx',
  './views/ProbeView.tsx',
]);
function lazyView(file: string): LazyExoticComponent<ComponentType<ViewProps>> | null {
  const loader = seeingViews[`./views/${file}.tsx`];
  return loader ? lazy(loader) : null;
}
const TraceView = lazyView('TraceView');
const ReplayView = lazyView('ReplayView');
const TemplatesView = lazyView('TemplatesView');
const DatasetView = lazyView('DatasetView');
const ProbeView = lazyView('ProbeView');

/** An engine exit the user must hear about (a crash, a kill, OOM) — not a normal end of a run. */
export function isAbnormalExit(e: { code: number | null; signal: string | null; reason: string }): boolean {
  return e.signal !== null || (e.code !== null && e.code !== 0) || /died unexpectedly|could not write/i.test(e.reason);
}

export interface EngineNotice { id: number; runId: string; message: string; time: number }

export function App({ client }: { client: Client }) {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [project, setProject] = useState<ProjectInfo | null>(null);
  const [projectChecked, setProjectChecked] = useState(false);
  const [theme, setTheme] = useState<ThemeName>(() => initialTheme());
  const [connection, setConnection] = useState<ConnectionState>('connecting');
  const [system, setSystem] = useState<SystemInfo | null>(null);
  const [notices, setNotices] = useState<EngineNotice[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [lastRunId, setLastRunId] = useState<string | undefined>(() => routeRunId(parseRoute(location.hash)));

  const navigate = useCallback((next: Route) => {
    const hash = formatRoute(next);
    if (location.hash !== hash) location.hash = hash;
    setRoute(next);
  }, []);

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => { const id = routeRunId(route); if (id) setLastRunId(id); }, [route]);
  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => client.onConnection(setConnection), [client]);

  // Current project and system info; refreshed on (re)connect.
  useEffect(() => {
    if (connection !== 'open') return;
    let cancelled = false;
    client.projects.info().then((r) => { if (!cancelled) { setProject(r.project); setProjectChecked(true); } }, (e) => { if (!cancelled) { setError(e); setProjectChecked(true); } });
    // the host probes for torch in the background: ask again until no backend is still being checked
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = (left: number) => client.system.info().then((s) => {
      if (cancelled) return;
      setSystem(s);
      if (left > 0 && s.backends.some(isProbing)) timer = setTimeout(() => ask(left - 1), 2000);
    }, () => {});
    void ask(30);
    return () => { cancelled = true; if (timer) clearTimeout(timer); };
  }, [client, connection]);

  // Apply the theme before re-rendering so that views reading CSS variables (chart colours) see it.
  const switchTheme = useCallback((next?: ThemeName) => {
    setTheme((t) => {
      const value = next ?? (t === 'dark' ? 'light' : 'dark');
      applyTheme(value);
      return value;
    });
  }, []);

  const pushNotice = useCallback((runId: string, message: string) => {
    setNotices((n) => [...n.slice(-4), { id: Date.now() + Math.random(), runId, message, time: Date.now() }]);
  }, []);

  // Project events: project opened/closed, engine process died.
  useEffect(() => client.subscribe({ kind: 'project' }, (ev: WorkbenchEvent) => {
    if (ev.kind !== 'project') return;
    const e = ev.event;
    if (e.type === 'project') setProject(e.project);
    if (e.type === 'engine-exit' && isAbnormalExit(e)) pushNotice(e.runId, `The engine process of run ${e.runId} stopped: ${e.reason}. The app keeps working; the run is marked failed and can be resumed from its last completed stage.`);
  }), [client, pushNotice]);

  // Desktop menu commands (Electron only).
  useEffect(() => {
    const b = bridge();
    if (!b) return;
    return b.onMenu((cmd: MenuCommand) => {
      const run = async () => {
        switch (cmd.type) {
          case 'new-project': {
            const path = await b.dialogs.openFolder({ title: 'New project: choose an empty folder', create: true });
            if (path) { setProject(await client.projects.create({ path })); navigate({ view: 'runs' }); }
            break;
          }
          case 'open-project': {
            const path = await b.dialogs.openFolder({ title: 'Open project folder' });
            if (path) { setProject(await client.projects.open({ path })); navigate({ view: 'runs' }); }
            break;
          }
          case 'open-recent': setProject(await client.projects.open({ path: cmd.path })); navigate({ view: 'runs' }); break;
          case 'navigate': navigate(parseRoute(`#/${cmd.view}`)); break;
          case 'toggle-theme': switchTheme(); break;
          case 'engine-died': pushNotice('', cmd.message); break;
          case 'project-opened': client.projects.info().then((r) => setProject(r.project), setError); break;
        }
      };
      run().catch(setError);
    });
  }, [client, navigate, pushNotice, switchTheme]);

  const onProjectOpened = useCallback((p: ProjectInfo) => {
    setProject(p);
    navigate({ view: 'runs' });
  }, [navigate]);

  const projectPath = project?.path ?? '';
  const needsProject = route.view !== 'projects';
  const viewProps: ViewProps = useMemo(() => ({
    api: client,
    projectPath,
    navigate,
    route,
    ...(routeRunId(route) ? { runId: routeRunId(route)! } : {}),
    ...((route.view === 'trace' || route.view === 'replay') && route.episodeId ? { episodeId: route.episodeId } : {}),
  }), [client, projectPath, navigate, route]);

  const renderView = () => {
    if (needsProject && !project) {
      if (!projectChecked) return <div className="muted">Loading…</div>;
      return <ProjectsView client={client} project={null} onOpened={onProjectOpened} notice="Open or create a project first." />;
    }
    switch (route.view) {
      case 'projects': return <ProjectsView client={client} project={project} onOpened={onProjectOpened} />;
      case 'runs': return <RunsView client={client} navigate={navigate} project={project!} />;
      case 'new-run': return <NewRunView client={client} navigate={navigate} preset={route.preset} system={system} />;
      case 'run': return <RunView client={client} navigate={navigate} runId={route.runId} theme={theme} {...(route.params ? { params: route.params } : {})} />;
      case 'compare': return <CompareView client={client} navigate={navigate} runIds={route.runIds} theme={theme} />;
      case 'studies': return <StudiesView client={client} navigate={navigate} name={route.name} />;
      case 'trace': return seeing(TraceView, 'Trace inspector');
      case 'replay': return seeing(ReplayView, 'Replay');
      case 'templates': return seeing(TemplatesView, 'Template editor');
      case 'datasets': return seeing(DatasetView, 'Dataset browser');
      case 'probe': return seeing(ProbeView, 'World-model probe');
    }
  };
  const seeing = (View: LazyExoticComponent<ComponentType<ViewProps>> | null, title: string) => {
    if (!View) return <div><h1>{title}</h1><div className="banner info">This view is not part of this build yet.</div></div>;
    return <Suspense fallback={<div className="muted">Loading {title}…</div>}><View {...viewProps} /></Suspense>;
  };

  const navTarget = (view: Route['view']): Route => {
    switch (view) {
      case 'run': return lastRunId ? { view: 'run', runId: lastRunId } : { view: 'runs' };
      case 'trace': return lastRunId ? { view: 'trace', runId: lastRunId } : { view: 'trace' };
      case 'replay': return lastRunId ? { view: 'replay', runId: lastRunId } : { view: 'replay' };
      case 'datasets': return lastRunId ? { view: 'datasets', runId: lastRunId } : { view: 'datasets' };
      case 'probe': return lastRunId ? { view: 'probe', runId: lastRunId } : { view: 'probe' };
      case 'compare': return { view: 'compare', runIds: route.view === 'compare' ? route.runIds : [] };
      default: return parseRoute(`#/${view}`);
    }
  };
  const activeSection = route.view === 'run' ? 'runs' : route.view;

  return (
    <div className="app" data-testid="app-shell">
      <header className="topbar">
        <div className="brand"><img src="./icon.svg" alt="" />SPA Workbench</div>
        <span className="project" data-testid="current-project" title={projectPath}>
          {project ? <>{project.name}{project.readOnly ? <span className="badge" data-testid="read-only-badge" style={{ marginLeft: 6 }}>read-only</span> : null} <span className="faint">— {project.path}</span></> : <span className="faint">no project open</span>}
        </span>
        <span className="spacer" />
        {connection !== 'open' && <span className={connection === 'closed' ? 'bad' : 'warn'} data-testid="connection-state">{connection === 'closed' ? 'disconnected — retrying…' : 'connecting…'}</span>}
        <button className="btn small" onClick={() => switchTheme()} data-testid="theme-toggle" title="Switch light / dark theme">
          {theme === 'dark' ? '☀ Light' : '☾ Dark'}
        </button>
      </header>
      <nav className="sidenav" aria-label="Sections">
        {NAV_SECTIONS.map((s, i) => (
          <div key={s.view}>
            {i === 1 && <div className="section-label">Project</div>}
            {s.view === 'trace' && <div className="section-label">Inspect</div>}
            <button className={activeSection === s.view ? 'active' : ''} disabled={s.needsProject && !project}
              onClick={() => navigate(navTarget(s.view))} data-testid={`nav-${s.view}`}>{s.label}</button>
          </div>
        ))}
      </nav>
      <main className="main" data-testid={`view-${route.view}`}>
        {notices.map((n) => (
          <div className="banner warn" role="alert" key={n.id} data-testid="engine-notice">
            <div className="row">
              <span className="title grow">Engine stopped unexpectedly</span>
              {n.runId && <button className="btn small" onClick={() => navigate({ view: 'run', runId: n.runId })}>Open run</button>}
              <button className="btn small ghost" aria-label="Dismiss" onClick={() => setNotices((all) => all.filter((x) => x.id !== n.id))}>✕</button>
            </div>
            <div className="details">{n.message}</div>
          </div>
        ))}
        {project?.readOnly && (
          <div className="banner info" role="status" data-testid="read-only-banner">
            <div className="title">Watching read-only{project.holder ? `: process ${project.holder.pid} (${project.holder.purpose}) on ${project.holder.host} holds this project` : ''}</div>
            <div className="details">
              Its runs update live from the project files. Changes (new runs, resume, rename, templates) are made in that process.
              {project.holder?.canStop ? ' Stop on a running run asks it to stop after the current step, as `spa-workbench stop` does.' : ' Stop its runs there (its window, or Ctrl-C in its terminal).'}
            </div>
          </div>
        )}
        <ErrorBanner error={error} onDismiss={() => setError(null)} />
        {renderView()}
      </main>
      <footer className="statusbar" data-testid="statusbar">
        <span>{client.transport === 'ipc' ? 'desktop' : 'browser mode'} · {connection}</span>
        {system && <span>host: {system.host}</span>}
        {system && <span title={system.backends.map((b) => `${b.name}: ${b.available ? 'available' : 'unavailable'} — ${b.detail}`).join('\n')} data-testid="status-backend">backend: {statusBackend(system)}</span>}
        {system?.versions['app'] && <span>v{system.versions['app']}</span>}
      </footer>
    </div>
  );
}
