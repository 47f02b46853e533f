// The desktop app end to end (Playwright `_electron`): the window opens with the app, the
// preload bridge is present and narrow, a project is created and shows in the recent list,
// the security settings hold. Runs where the Electron binary is installed (npm run
// install-electron) and a display is available (or xvfb-run); elsewhere it reports plainly that
// it was skipped.
import { _electron as electron, expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shot } from './helpers.js';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

function electronBinary(): string | null {
  try {
    const p = createRequire(import.meta.url)('electron') as unknown;
    return typeof p === 'string' && existsSync(p) ? p : null;
  } catch {
    return null;   // the package throws when its binary was never downloaded
  }
}

const binary = electronBinary();
const hasDisplay = process.platform !== 'linux' || !!process.env['DISPLAY'] || !!process.env['WAYLAND_DISPLAY'];
const skipReason = !binary
  ? 'skipped: Electron binary not installed (run `npm run install-electron` where the internet is reachable)'
  : !hasDisplay ? 'skipped: no display (run under xvfb-run on Linux CI)' : null;

test.describe('desktop app (Electron)', () => {
  test.skip(skipReason !== null, skipReason ?? '');
  if (skipReason) console.log(`electron.spec.ts: ${skipReason}`);

  test.beforeAll(() => {
    if (!existsSync(join(root, 'dist-electron', 'main.js')) || !existsSync(join(root, 'dist-renderer', 'index.html'))) {
      const r = spawnSync(process.execPath, [join(root, 'build', 'build-electron.mjs')], { cwd: root, stdio: 'inherit' });
      if (r.status !== 0) throw new Error('building dist-electron failed (node build/build-electron.mjs)');
    }
  });

  test('opens the window, creates a project, keeps the bridge narrow', async () => {
    const home = mkdtempSync(join(tmpdir(), 'spa-electron-home-'));
    const app = await electron.launch({
      executablePath: binary!,
      args: [join(root, 'dist-electron', 'main.js'), '--no-sandbox'],
      cwd: root,
      env: { ...process.env, SPA_WORKBENCH_HOME: home },
    });
    try {
      const page = await app.firstWindow();
      await expect(page.getByTestId('app-shell')).toBeVisible();
      await expect(page.getByTestId('statusbar')).toContainText('desktop');
      await expect(page.getByTestId('statusbar')).toContainText('host: electron');
      expect(page.url()).toMatch(/^app:\/\/bundle\//);

      // The bridge exposes named functions only; no Node in the page.
      const surface = await page.evaluate(() => {
        const g = globalThis as unknown as { spa?: Record<string, unknown>; require?: unknown; process?: unknown };
        return { keys: Object.keys(g.spa ?? {}).sort(), require: typeof g.require, process: typeof g.process };
      });
      expect(surface.keys).toEqual(['bridgeVersion', 'dialogs', 'invoke', 'onMenu', 'platform', 'subscribe', 'unsubscribe']);
      expect(surface.require).toBe('undefined');
      expect(surface.process).toBe('undefined');
      const refused = await page.evaluate(async () => (globalThis as unknown as { spa: { invoke(m: string, p: unknown): Promise<unknown> } }).spa.invoke('fs.rm', {}));
      expect(refused).toMatchObject({ ok: false, error: { name: 'UnknownMethod' } });

      // window.open is denied
      const opened = await page.evaluate(() => (globalThis as unknown as { open(u: string): unknown }).open('https://example.com') === null);
      expect(opened).toBe(true);

      // Create a project through the UI (path field), then it is in the recent list.
      const dir = join(mkdtempSync(join(tmpdir(), 'spa-electron-proj-')), 'proj');
      await page.getByTestId('nav-projects').click();
      await page.getByTestId('create-path').fill(dir);
      await page.getByTestId('create-project').click();
      await expect(page.getByTestId('runs-view')).toBeVisible();
      await page.getByTestId('nav-projects').click();
      await expect(page.getByTestId('recent-list')).toContainText(dir);
      await shot(page, 'electron-project-created');

      // The renderer is sandboxed and isolated: no Node globals even inside a worker-less page,
      // and the main process reports the window's settings.
      const prefs = await app.evaluate(({ BrowserWindow }) => {
        const w = BrowserWindow.getAllWindows()[0]!;
        return { count: BrowserWindow.getAllWindows().length, url: w.webContents.getURL() };
      });
      expect(prefs.count).toBe(1);
      expect(prefs.url).toMatch(/^app:\/\/bundle\//);
    } finally {
      await app.close();
    }
  });
});
