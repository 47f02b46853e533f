// Starts the import worker from the TypeScript sources (CLI, serve, tests: tsx, no build step).
// The Electron build bundles core/host/import-worker.ts as dist-electron/import-worker.js instead.
import { register } from 'tsx/esm/api';
register();
await import('./import-worker.ts');
