// Node loader: resolve `electron` to the fake below, so dist-electron/main.js can run under
// plain Node in tests (electron-main.spec.ts) where the Electron binary is not installed.
import { register } from 'node:module';
register(new URL('./hooks.mjs', import.meta.url));
