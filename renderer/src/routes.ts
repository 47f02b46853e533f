// Navigation routes of the renderer. Stable contract shared by every view: views receive a
// `navigate(route)` prop and call it with one of these. The route lives in the URL hash
// (#/run/<id>, ...) so reload and back/forward work in Electron and in browser mode alike.

export type Route =
  | { view: 'projects' }
  | { view: 'runs' }
  | { view: 'new-run'; preset?: string }
  | { view: 'run'; runId: string; params?: Record<string, string> }   // params: the tab and chart view state (charts/chart-view.ts)
  | { view: 'compare'; runIds: string[] }
  | { view: 'studies'; name?: string }
  | { view: 'trace'; runId?: string; episodeId?: string; filters?: Record<string, string> }
  | { view: 'replay'; runId?: string; episodeId?: string; otherRunId?: string }
  | { view: 'templates'; templateName?: string; runId?: string }
  | { view: 'datasets'; runId?: string }
  | { view: 'probe'; runId?: string; params?: Record<string, string> };

export type RouteView = Route['view'];

/** Top-level sections shown in the navigation bar, in order. */
export const NAV_SECTIONS: ReadonlyArray<{ view: RouteView; label: string; needsProject: boolean }> = [
  { view: 'projects', label: 'Projects', needsProject: false },
  { view: 'runs', label: 'Runs', needsProject: true },
  { view: 'new-run', label: 'New run', needsProject: true },
  { view: 'compare', label: 'Compare', needsProject: true },
  { view: 'studies', label: 'Studies', needsProject: true },
  { view: 'trace', label: 'Traces', needsProject: true },
  { view: 'replay', label: 'Replay', needsProject: true },
  { view: 'templates', label: 'Templates', needsProject: true },
  { view: 'datasets', label: 'Datasets', needsProject: true },
  { view: 'probe', label: 'Probe', needsProject: true },
];

const enc = encodeURIComponent;
const dec = (s: string): string => { try { return decodeURIComponent(s); } catch { return s; } };

/** Route → hash string, e.g. `#/run/r-001`, `#/compare/a,b`, `#/trace/r1/e-3`. */
export function formatRoute(route: Route): string {
  switch (route.view) {
    case 'projects': return '#/projects';
    case 'runs': return '#/runs';
    case 'new-run': return route.preset ? `#/new-run/${enc(route.preset)}` : '#/new-run';
    case 'run': return `#/run/${enc(route.runId)}${queryString(route.params)}`;
    case 'compare': return `#/compare/${route.runIds.map(enc).join(',')}`;
    case 'studies': return route.name ? `#/studies/${enc(route.name)}` : '#/studies';
    case 'trace': return `#/trace${route.runId ? `/${enc(route.runId)}` : ''}${route.runId && route.episodeId ? `/${enc(route.episodeId)}` : ''}${queryString(route.filters)}`;
    case 'replay': {
      const q = route.otherRunId ? `?other=${enc(route.otherRunId)}` : '';
      return `#/replay${route.runId ? `/${enc(route.runId)}` : ''}${route.runId && route.episodeId ? `/${enc(route.episodeId)}` : ''}${q}`;
    }
    case 'templates': {
      const q = route.runId ? `?run=${enc(route.runId)}` : '';
      return `#/templates${route.templateName ? `/${enc(route.templateName)}` : ''}${q}`;
    }
    case 'datasets': return `#/datasets${route.runId ? `/${enc(route.runId)}` : ''}`;
    case 'probe': return `#/probe${route.runId ? `/${enc(route.runId)}` : ''}${queryString(route.params)}`;
  }
}

/** `?a=1&b=x` from a string map (empty values left out; keys sorted so equal state gives one URL). */
function queryString(params: Record<string, string> | undefined): string {
  const entries = Object.entries(params ?? {}).filter(([, v]) => v !== '').sort(([a], [b]) => a.localeCompare(b));
  return entries.length ? `?${new URLSearchParams(entries).toString()}` : '';
}

const queryMap = (query: URLSearchParams): Record<string, string> | undefined => {
  const out: Record<string, string> = {};
  query.forEach((v, k) => { if (v !== '') out[k] = v; });
  return Object.keys(out).length ? out : undefined;
};

/** Hash string → Route; anything unrecognised falls back to the projects page. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [pathPart = '', queryPart = ''] = raw.split('?', 2);
  const parts = pathPart.split('/').filter((p) => p.length > 0).map(dec);
  const query = new URLSearchParams(queryPart);
  const [view, a, b] = parts;
  switch (view) {
    case 'runs': return { view: 'runs' };
    case 'new-run': return a ? { view: 'new-run', preset: a } : { view: 'new-run' };
    case 'run': {
      const params = queryMap(query);
      return a ? { view: 'run', runId: a, ...(params ? { params } : {}) } : { view: 'runs' };
    }
    case 'compare': return { view: 'compare', runIds: (pathPart.split('/')[1] ?? '').split(',').filter(Boolean).map(dec) };
    case 'studies': return a ? { view: 'studies', name: a } : { view: 'studies' };
    case 'trace': {
      const filters = queryMap(query);
      return a ? { view: 'trace', runId: a, ...(b ? { episodeId: b } : {}), ...(filters ? { filters } : {}) } : { view: 'trace' };
    }
    case 'probe': {
      const params = queryMap(query);
      return { view: 'probe', ...(a ? { runId: a } : {}), ...(params ? { params } : {}) };
    }
    case 'replay': {
      const other = query.get('other');
      return { view: 'replay', ...(a ? { runId: a } : {}), ...(a && b ? { episodeId: b } : {}), ...(other ? { otherRunId: other } : {}) };
    }
    case 'templates': {
      const run = query.get('run');
      return { view: 'templates', ...(a ? { templateName: a } : {}), ...(run ? { runId: run } : {}) };
    }
    case 'datasets': return a ? { view: 'datasets', runId: a } : { view: 'datasets' };
    default: return { view: 'projects' };
  }
}

/** The run a route is about, if any (used to keep the run context when switching sections). */
export function routeRunId(route: Route): string | undefined {
  switch (route.view) {
    case 'run': case 'trace': case 'replay': return route.runId;
    case 'templates': case 'datasets': case 'probe': return route.runId;
    case 'compare': return route.runIds[0];
    default: return undefined;
  }
}

import type { WorkbenchApi } from '../../core/api/contract.js';

/** Props every view receives from the App frame. `api` is the full client (also has subscribe). */
export interface ViewProps {
  api: WorkbenchApi;
  projectPath: string;
  runId?: string;
  episodeId?: string;
  navigate: (route: Route) => void;
  /** The whole current route (for view-specific fields such as otherRunId or templateName). */
  route?: Route;
}
