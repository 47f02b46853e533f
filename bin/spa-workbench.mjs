#!/usr/bin/env node
// CLI entry. Runs the esbuild build of core/cli/main.ts (dist-cli/, made by build/build-cli.mjs at
// `npm ci`) while it is current: every source file it was built from has the size and mtime its
// manifest recorded. Otherwise (no build, a source edited since) it runs core/cli/main.ts through
// the tsx loader, as before, and starts a rebuild in the background for the next start.
// SPA_WORKBENCH_CLI=source always runs the sources; SPA_WORKBENCH_CLI=built fails when the build is not current.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { currentBuild } from './cli-build.mjs';

const root = new URL('../', import.meta.url);
const mode = process.env.SPA_WORKBENCH_CLI ?? 'auto';

const build = mode === 'source' ? { why: 'SPA_WORKBENCH_CLI=source' } : currentBuild(root);
if (build.url) {
  await import(build.url.href);
} else {
  if (mode === 'built') {
    console.error(`spa-workbench: SPA_WORKBENCH_CLI=built but the build is not current (${build.why}); run: node build/build-cli.mjs`);
    process.exit(2);
  }
  if (mode !== 'source') {
    // rebuild for the next start (one at a time, see build/build-cli.mjs); this start runs the sources
    try {
      spawn(process.execPath, [fileURLToPath(new URL('build/build-cli.mjs', root)), '--quiet'], { detached: true, stdio: 'ignore' }).unref();
    } catch { /* read-only checkout: stay on the sources */ }
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../core/cli/main.ts');
}
