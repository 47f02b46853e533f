// A fake of the parts of Electron's main-process API that electron/main.ts uses. It runs the real
// main.js under Node and lets the test drive it over the fork IPC channel:
//   {op:'invoke', id, channel, args, frameUrl}  → calls the ipcMain handler as that frame
//   {op:'fetch', id, url}                       → calls the app:// protocol handler
//   {op:'state', id}                            → windows, menu labels, security settings
// Renderer-bound messages (webContents.send) are forwarded as {op:'send', channel, args}.
import { EventEmitter } from 'node:events';
import { fork } from 'node:child_process';

const toParent = (m) => { if (process.send) process.send(m); };

class App extends EventEmitter {
  isPackaged = false;
  #ready = null;
  requestSingleInstanceLock() { return true; }
  whenReady() { this.#ready ??= new Promise((r) => setTimeout(r, 10)); return this.#ready; }
  sandboxEnabled = false;
  enableSandbox() { if (this.#ready) throw new Error('enableSandbox after ready'); this.sandboxEnabled = true; }
  getVersion() { return '0.0.0-fake'; }
  getAppPath() { return process.cwd(); }
  quit() { this.emit('before-quit', { preventDefault() {} }); }
  exit(code = 0) { toParent({ op: 'exit', code }); setTimeout(() => process.exit(code), 50); }
}
export const app = new App();

const handlers = new Map();
export const ipcMain = {
  handle(channel, fn) { handlers.set(channel, fn); },
  removeHandler(channel) { handlers.delete(channel); },
};

let protocolHandler = null;
export const protocol = {
  privileged: [],
  registerSchemesAsPrivileged(list) { this.privileged.push(...list); },
  handle(_scheme, fn) { protocolHandler = fn; },
};

const windows = [];
class WebContents extends EventEmitter {
  id = 1;
  url = '';
  mainFrame = { url: '', parent: null };
  send(channel, ...args) { toParent({ op: 'send', channel, args: JSON.parse(JSON.stringify(args)) }); }
  isDestroyed() { return false; }
  setWindowOpenHandler(fn) { this.windowOpenHandler = fn; }
  reload() {}
  getURL() { return this.url; }
}
export class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    this.options = options;
    this.webContents = new WebContents();
    windows.push(this);
    app.emit('web-contents-created', {}, this.webContents);
    setTimeout(() => this.emit('ready-to-show'), 5);
  }
  static getAllWindows() { return windows; }
  static fromWebContents() { return windows[0] ?? null; }
  async loadURL(url) { this.webContents.url = url; this.webContents.mainFrame.url = url; }
  show() {} isMinimized() { return false; } restore() {} focus() {} isDestroyed() { return false; }
}

export const session = { defaultSession: { setPermissionRequestHandler(fn) { this.permission = fn; }, setPermissionCheckHandler(fn) { this.check = fn; } } };
export const dialog = { async showOpenDialog() { return { canceled: false, filePaths: ['/picked'] }; }, async showMessageBox(...a) { toParent({ op: 'dialog', args: JSON.parse(JSON.stringify(a.at(-1))) }); return { response: 0 }; } };
let menu = null;
export const Menu = { buildFromTemplate(t) { return t; }, setApplicationMenu(m) { menu = m; } };
export const nativeTheme = { shouldUseDarkColors: false };
export const crashReporter = { start(o) { this.options = o; } };
export const utilityProcess = {
  fork(modulePath, args, options) {
    const child = fork(modulePath, args, { env: options.env, execArgv: options.execArgv ?? [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'json' });
    const proc = new EventEmitter();
    proc.pid = child.pid;
    proc.stdout = child.stdout;
    proc.stderr = child.stderr;
    proc.postMessage = (m) => child.send(m);
    proc.kill = () => child.kill();
    child.on('message', (m) => proc.emit('message', m));
    child.on('exit', (code) => proc.emit('exit', code ?? 1));
    toParent({ op: 'utility-fork', serviceName: options.serviceName, modulePath });
    return proc;
  },
};
export default { app, ipcMain, protocol, BrowserWindow, session, dialog, Menu, nativeTheme, crashReporter, utilityProcess };

process.on('message', async (msg) => {
  if (!msg || typeof msg !== 'object') return;
  const reply = (body) => toParent({ op: 'reply', id: msg.id, ...body });
  try {
    if (msg.op === 'invoke') {
      const fn = handlers.get(msg.channel);
      if (!fn) return reply({ error: `no handler for ${msg.channel}` });
      const wc = windows[0]?.webContents ?? new WebContents();
      const event = { senderFrame: { url: msg.frameUrl, parent: null }, sender: wc };
      reply({ result: await fn(event, ...(msg.args ?? [])) });
    } else if (msg.op === 'fetch') {
      const res = await protocolHandler(new Request(msg.url));
      const body = await res.text();
      reply({ result: { status: res.status, headers: Object.fromEntries(res.headers), length: body.length, head: body.slice(0, 200) } });
    } else if (msg.op === 'navigate') {
      const event = { prevented: false, preventDefault() { this.prevented = true; } };
      windows[0].webContents.emit('will-navigate', event, msg.url);
      reply({ result: { prevented: event.prevented, windowOpen: windows[0].webContents.windowOpenHandler?.({ url: msg.url })?.action } });
    } else if (msg.op === 'frameNavigate') {
      const event = { url: msg.url, isMainFrame: false, prevented: false, preventDefault() { this.prevented = true; } };
      windows[0].webContents.emit('will-frame-navigate', event);
      reply({ result: { prevented: event.prevented } });
    } else if (msg.op === 'state') {
      const w = windows[0];
      let permission = null;
      session.defaultSession.permission?.(null, 'media', (ok) => { permission = ok; });
      reply({ result: {
        windows: windows.length, url: w?.webContents.url, webPreferences: w ? { ...w.options.webPreferences, preload: String(w.options.webPreferences.preload) } : null,
        menu: (menu ?? []).map((m) => m.label ?? m.role), privileged: protocol.privileged, sandboxEnabled: app.sandboxEnabled, crashUpload: crashReporter.options?.uploadToServer, permission,
      } });
    } else if (msg.op === 'quit') {
      app.quit();
      reply({ result: true });
    }
  } catch (err) {
    reply({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
});
