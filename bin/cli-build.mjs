// Whether the CLI's esbuild build (dist-cli/, build/build-cli.mjs) is current for the sources of
// the checkout at `root`: every file it was built from still has the size and mtime its manifest
// recorded. Used by bin/spa-workbench.mjs at every start (a stat per source file, a few ms).
import { readFileSync, statSync } from 'node:fs';

/** { url } of the built entry when current, else { why } it is not (names the file). */
export function currentBuild(root) {
  let manifest;
  try { manifest = JSON.parse(readFileSync(new URL('dist-cli/manifest.json', root), 'utf8')); } catch { return { why: 'no dist-cli/manifest.json' }; }
  if (!manifest || typeof manifest.entry !== 'string' || !manifest.inputs || typeof manifest.inputs !== 'object') {
    return { why: 'dist-cli/manifest.json is not a build manifest' };
  }
  for (const [file, recorded] of Object.entries(manifest.inputs)) {
    let s;
    try { s = statSync(new URL(file, root)); } catch { return { why: `${file} is gone` }; }
    if (!Array.isArray(recorded) || s.size !== recorded[0] || s.mtimeMs !== recorded[1]) return { why: `${file} changed since the build` };
  }
  return { url: new URL(`dist-cli/${manifest.entry}`, root) };
}
