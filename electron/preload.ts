// Preload (sandboxed, context-isolated): exposes window.spa — named, typed functions only
// (renderer/src/api/bridge.ts), never ipcRenderer itself. Bundled to one CommonJS file
// (dist-electron/preload.cjs) by build/build-electron.mjs, as a sandboxed preload requires.
import { contextBridge, ipcRenderer } from 'electron';
import { createBridge } from './bridge-impl.js';

/** The contract's method names, inlined by build/build-electron.mjs (keeps zod out of the preload). */
declare const __SPA_API_METHODS__: string[];

contextBridge.exposeInMainWorld('spa', createBridge(ipcRenderer, new Set(__SPA_API_METHODS__), process.platform));
