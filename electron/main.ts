// Electron main process: one window, native menus (New / Open / Recent project), dialogs,
// single-instance lock, the API dispatcher hosted over the preload bridge, engines in
// utilityProcess, and the user told when a renderer or an engine process dies.
// Security: contextIsolation + sandbox on, nodeIntegration off, strict CSP, the renderer loaded
// from the app:// scheme, every IPC handler checks the sender frame, new windows and navigation
// denied, all permission requests refused.
import {
  app, BrowserWindow, crashReporter, dialog, ipcMain, Menu, nativeTheme, protocol, session,
  type MenuItemConstructorOptions, type WebContents,
} from 'electron';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDispatcher, type Dispatcher } from '../core/host/dispatcher.js';
import { START_RUN_ENV, describeStartup, startupRunAction } from '../core/host/startup-run.js';
import type { RunSummary } from '../core/api/contract.js';
import { toApiError } from '../core/api/errors.js';
import { BRIDGE_CHANNELS, type MenuCommand } from './bridge.js';
import { ElectronUtilityLauncher } from './engine-launcher.js';
import { registerIpcHandlers } from './ipc-host.js';
import {
  APP_ORIGIN, APP_SCHEME, appResponseHeaders, devServerUrlFor, isTrustedOrigin, mimeType, resolveAppPath,
} from './security.js';
import { utilityChildLauncher, utilityPerplexityLauncher } from './perplexity-launcher.js';

const here = path.dirname(fileURLToPath(import.meta.url));        // dist-electron/
const appRoot = path.resolve(here, '..');
const rendererDir = path.join(appRoot, 'dist-renderer');
// e.g. http://localhost:5173 (npm run dev:renderer); ignored in a packaged app (see devServerUrlFor)
const devServerUrl = devServerUrlFor(process.env['SPA_WORKBENCH_DEV_URL'], app.isPackaged);

crashReporter.start({ uploadToServer: false });                      // local crash dumps only
app.enableSandbox();                                                 // every renderer sandboxed, whatever a window's webPreferences say

protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
]);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  main();
}

/** The project folder among command-line arguments: the last absolute path that is not the app itself. */
function projectArg(args: string[]): string | null {
  const candidates = args.filter((a) => !a.startsWith('-') && path.isAbsolute(a) && path.resolve(a) !== appRoot);
  return candidates.length > 0 ? candidates[candidates.length - 1]! : null;
}

function main(): void {
  let win: BrowserWindow | null = null;
  let startRunId: string | null = null;          // the run `start --run` created or resumed: the window opens on it
  let dispatcher: Dispatcher | null = null;
  let disposeIpc: (() => void) | null = null;

  const sendMenu = (command: MenuCommand) => {
    if (win && !win.isDestroyed()) win.webContents.send(BRIDGE_CHANNELS.menu, command);
  };

  // A second launch focuses this window; a project folder given to it is opened here.
  app.on('second-instance', (_e, argv) => {
    const project = projectArg(argv.slice(1));
    if (project && dispatcher) {
      dispatcher.call('projects.open', { path: project }).then(
        () => sendMenu({ type: 'project-opened', path: project }),
        (err: unknown) => void dialog.showMessageBox({ type: 'error', title: 'Could not open the project', message: toApiError(err).message }),
      );
    }
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  });

  // Deny new windows, navigation away from the app (main frame and subframes), webviews; refuse permission requests.
  app.on('web-contents-created', (_e, contents: WebContents) => {
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    contents.on('will-navigate', (event, url) => { if (!isTrustedOrigin(url, devServerUrl)) event.preventDefault(); });
    contents.on('will-redirect', (event, url) => { if (!isTrustedOrigin(url, devServerUrl)) event.preventDefault(); });
    // any frame (an iframe included, which will-navigate does not see) stays on the app's own origin
    contents.on('will-frame-navigate', (details) => { if (!isTrustedOrigin(details.url, devServerUrl)) details.preventDefault(); });
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });

  app.on('child-process-gone', (_e, details) => {
    if (details.type === 'Utility' && details.serviceName?.startsWith('spa-engine-')) return; // reported by the launcher
    if (details.reason === 'clean-exit') return;
    console.error(`child process gone: ${details.type} ${details.name ?? ''} (${details.reason}, exit ${details.exitCode})`);
  });

  app.on('window-all-closed', () => app.quit());
  // Stop active runs at their next step and release the project lock before exiting (at most 15 s).
  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting || !dispatcher) return;
    event.preventDefault();
    quitting = true;
    disposeIpc?.();
    const timeout = new Promise((resolve) => setTimeout(resolve, 15_000));
    void Promise.race([dispatcher.dispose({ kill: false }), timeout])
      .catch((err: unknown) => console.error(`shutdown: ${toApiError(err).message}`))
      .finally(() => app.exit(0));
  });

  void app.whenReady().then(async () => {
    session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
    session.defaultSession.setPermissionCheckHandler(() => false);

    // The renderer build, served from app://bundle/ with the CSP header.
    protocol.handle(APP_SCHEME, async (request) => {
      const rel = resolveAppPath(request.url);
      const notFound = (text: string) => new Response(text, { status: 404, headers: appResponseHeaders('text/plain; charset=utf-8') });
      if (!rel) return notFound('not found');
      try {
        const body = await readFile(path.join(rendererDir, rel));
        return new Response(body, { headers: appResponseHeaders(mimeType(rel)) });
      } catch {
        return notFound(`not found: ${rel}`);
      }
    });

    const engineEntry = path.join(here, 'engine-process.js');
    const launcher = new ElectronUtilityLauncher(engineEntry, (serviceName, reason, exitCode) => {
      const runId = serviceName.replace(/^spa-engine-/, '');
      const message = `The engine process of run ${runId} stopped unexpectedly (${reason}, exit code ${exitCode}). The run is marked failed; the app keeps working and the run can be resumed.`;
      console.error(message);
      // With a window open, the dispatcher's 'engine-exit' project event shows the banner there;
      // without one, tell the user with a native dialog.
      if (!win || win.isDestroyed()) void dialog.showMessageBox({ type: 'error', title: 'Engine stopped', message });
    });
    // templates.perplexity in a utilityProcess of the bundled entry: no ELECTRON_RUN_AS_NODE (the fuse is off), no bin/ needed
    dispatcher = createDispatcher({ host: 'electron', launcher, watchWhenLocked: true,
      perplexityLauncher: utilityPerplexityLauncher(path.join(here, 'template-perplexity.js')),
      probeLauncher: utilityChildLauncher(path.join(here, 'probe.js'), 'spa-probe') });

    disposeIpc = registerIpcHandlers(ipcMain, {
      dispatcher,
      isTrusted: (url) => isTrustedOrigin(url, devServerUrl),
      toApiError: (err, where) => toApiError(err, where),
      onRejected: (channel, url) => console.warn(`refused IPC ${channel} from ${url ?? 'unknown frame'}`),
      openFolder: async (event, options) => {
        const owner = BrowserWindow.fromWebContents(event.sender as unknown as WebContents) ?? win;
        const props: Array<'openDirectory' | 'createDirectory' | 'promptToCreate'> = ['openDirectory'];
        if (options.create) props.push('createDirectory', 'promptToCreate');
        const dialogOptions = { title: options.title ?? 'Choose a folder', properties: props, ...(options.defaultPath ? { defaultPath: options.defaultPath } : {}) };
        const r = owner ? await dialog.showOpenDialog(owner, dialogOptions) : await dialog.showOpenDialog(dialogOptions);
        return r.canceled || r.filePaths.length === 0 ? null : r.filePaths[0]!;
      },
    });

    // Open a project given on the command line: `spa-workbench-desktop /path/to/project`.
    const argProject = projectArg(process.argv.slice(app.isPackaged ? 1 : 2));
    if (argProject) await dispatcher.call('projects.open', { path: argProject }).catch((err: unknown) => console.error(toApiError(err).message));
    // `spa-workbench start --run PRESET` hands the main job to the app: SPA_START_RUN=preset:size:env.
    const startRun = process.env.SPA_START_RUN;
    if (argProject && startRun) {
      const [preset = 'spa', size = 'quick', env = START_RUN_ENV] = startRun.split(':');
      try {
        // Only when the project has no runs yet; an unfinished one is resumed, a finished one opened.
        const { runs } = await dispatcher.call('runs.list', { limit: 100000 }) as { runs: RunSummary[] };
        const action = startupRunAction(runs, preset, size);
        if (action.kind === 'create') {
          const run = await dispatcher.call('runs.create', { preset, size, set: { 'env.id': env } }) as { id: string };
          await dispatcher.call('runs.start', { runId: run.id });
          startRunId = run.id;
        } else {
          if (action.kind === 'start') await dispatcher.call('runs.start', { runId: action.runId });
          if (action.kind === 'resume') await dispatcher.call('runs.resume', { runId: action.runId });
          startRunId = action.runId;
        }
        console.log(describeStartup(action, preset, size, argProject));
      } catch (err) {
        void dialog.showMessageBox({ type: 'error', title: 'Could not start the run', message: toApiError(err).message });
      }
    }

    win = createWindow();
    await buildMenu();
    dispatcher.subscribe({ kind: 'project' }, (ev) => {
      if (ev.kind === 'project' && ev.event.type === 'project') void buildMenu();
    });
  });

  function createWindow(): BrowserWindow {
    const w = new BrowserWindow({
      width: 1280,
      height: 800,
      minWidth: 960,
      minHeight: 600,
      show: false,
      title: 'SPA Workbench',
      icon: path.join(appRoot, 'resources', 'icon.png'),
      backgroundColor: nativeTheme.shouldUseDarkColors ? '#14171c' : '#f6f7f9',
      webPreferences: {
        preload: path.join(here, 'preload.cjs'),
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        webviewTag: false,
        spellcheck: false,
      },
    });
    w.once('ready-to-show', () => w.show());
    w.webContents.on('render-process-gone', (_e, details) => {
      if (details.reason === 'clean-exit') return;
      void dialog.showMessageBox(w, {
        type: 'error',
        title: 'Window stopped',
        message: `The window's renderer process stopped (${details.reason}, exit code ${details.exitCode}).`,
        detail: 'Running trainings are not affected: they run in their own engine processes. Reload to continue.',
        buttons: ['Reload', 'Quit'],
        defaultId: 0,
      }).then((r) => { if (r.response === 0) w.webContents.reload(); else app.quit(); });
    });
    w.webContents.on('unresponsive', () => console.warn('renderer unresponsive'));
    w.on('closed', () => { if (win === w) win = null; });
    void w.loadURL(`${devServerUrl ?? `${APP_ORIGIN}/index.html`}${startRunId ? `#/run/${encodeURIComponent(startRunId)}` : ''}`);
    return w;
  }

  async function buildMenu(): Promise<void> {
    let recent: Array<{ path: string; name: string; exists: boolean }> = [];
    try {
      recent = ((await dispatcher?.call('projects.recent', {})) as { projects: typeof recent } | undefined)?.projects ?? [];
    } catch { /* no recent list yet */ }
    const isMac = process.platform === 'darwin';
    const nav = (view: string): MenuItemConstructorOptions['click'] => () => sendMenu({ type: 'navigate', view });
    const template: MenuItemConstructorOptions[] = [
      ...(isMac ? [{ role: 'appMenu' as const }] : []),
      {
        label: '&File',
        submenu: [
          { label: 'New Project…', accelerator: 'CmdOrCtrl+Shift+N', click: () => sendMenu({ type: 'new-project' }) },
          { label: 'Open Project…', accelerator: 'CmdOrCtrl+O', click: () => sendMenu({ type: 'open-project' }) },
          {
            label: 'Open Recent',
            submenu: recent.length === 0
              ? [{ label: 'No recent projects', enabled: false }]
              : recent.slice(0, 10).map((r) => ({ label: `${r.name} — ${r.path}`, enabled: r.exists, click: () => sendMenu({ type: 'open-recent', path: r.path }) })),
          },
          { type: 'separator' },
          { label: 'New Run…', accelerator: 'CmdOrCtrl+N', click: nav('new-run') },
          { type: 'separator' },
          isMac ? { role: 'close' } : { role: 'quit' },
        ],
      },
      { role: 'editMenu' },
      {
        label: '&View',
        submenu: [
          { label: 'Projects', click: nav('projects') },
          { label: 'Runs', accelerator: 'CmdOrCtrl+1', click: nav('runs') },
          { label: 'Compare', accelerator: 'CmdOrCtrl+2', click: nav('compare') },
          { label: 'Templates', accelerator: 'CmdOrCtrl+3', click: nav('templates') },
          { type: 'separator' },
          { label: 'Toggle Dark Theme', accelerator: 'CmdOrCtrl+Shift+D', click: () => sendMenu({ type: 'toggle-theme' }) },
          { type: 'separator' },
          { role: 'reload' },
          ...(app.isPackaged ? [] : [{ role: 'toggleDevTools' as const }]),
          { type: 'separator' },
          { role: 'resetZoom' }, { role: 'zoomIn' }, { role: 'zoomOut' },
          { type: 'separator' },
          { role: 'togglefullscreen' },
        ],
      },
      { role: 'windowMenu' },
      {
        label: '&Help',
        submenu: [
          {
            label: 'About SPA Workbench',
            click: () => void dialog.showMessageBox({
              type: 'info', title: 'About SPA Workbench',
              message: `SPA Workbench ${app.getVersion()}`,
              detail: `Electron ${process.versions.electron} · Node ${process.versions.node} · Chromium ${process.versions.chrome}\nWorld-model reinforcement learning for LLM agents, on your machine.`,
            }),
          },
        ],
      },
    ];
    Menu.setApplicationMenu(Menu.buildFromTemplate(template));
  }
}
