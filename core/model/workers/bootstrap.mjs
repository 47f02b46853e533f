// Worker-thread entry: loads the TypeScript worker module through tsx when running from source
// (a bundled build points `entry` at .js and skips the loader).
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
