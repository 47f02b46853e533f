#!/usr/bin/env node
// Downloads the Electron binary for users with internet access. `npm ci` skips it on purpose
// ("allowScripts": {"electron": false} and electron is an optional dependency), so that an
// install with only the npm registry reachable still succeeds. This runs the electron
// package's own installer (node_modules/electron/install.js), which fetches the release zip
// from GitHub (or ELECTRON_MIRROR) and checks it against the package's checksums.
// Usage: npm run install-electron
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';

const require = createRequire(import.meta.url);
let pkgDir;
try {
  pkgDir = dirname(require.resolve('electron/package.json'));
} catch {
  console.error('The electron package is not installed (it is an optional dependency).\nFix: npm install --include=optional electron@38, then run this again.');
  process.exit(1);
}
const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
const pathFile = join(pkgDir, 'path.txt');
if (existsSync(join(pkgDir, 'dist')) && existsSync(pathFile)) {
  console.log(`Electron ${version} is already installed (${join(pkgDir, 'dist')}).`);
  process.exit(0);
}
console.log(`Downloading Electron ${version} (about 100 MB) with the electron package's installer…`);
const r = spawnSync(process.execPath, [join(pkgDir, 'install.js')], { stdio: 'inherit', env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '' } });
if (r.status !== 0 || !existsSync(pathFile)) {
  console.error([
    `Electron ${version} could not be downloaded (exit ${r.status ?? r.signal}).`,
    'This needs access to https://github.com/electron/electron/releases (or set ELECTRON_MIRROR to a mirror).',
    'Without it the workbench still runs in browser mode: npm run serve',
  ].join('\n'));
  process.exit(1);
}
console.log(`Electron ${version} installed. Start the desktop app with: npm start`);
