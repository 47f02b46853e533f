// Starts the render worker from the TypeScript sources (CLI, serve, tests: tsx, no build step).
// The Electron build bundles core/host/render-worker.ts as dist-electron/render-worker.js instead.
import { register } from 'tsx/esm/api';
register();
await import('./render-worker.ts');
