// Preload (sandboxed, context-isolated): exposes window.spa — named, typed functions only
// (renderer/src/api/bridge.ts), never ipcRenderer itself. Bundled to one CommonJS file
// (dist-electron/preload.cjs) by build/build-electron.mjs, as a sandboxed preload requires.
import { contextBridge, ipcRenderer } from 'electron';
import { apiMethodNames } from '../core/api/contract.js';
import { createBridge } from './bridge-impl.js';

contextBridge.exposeInMainWorld('spa', createBridge(ipcRenderer, new Set(apiMethodNames()), process.platform));
