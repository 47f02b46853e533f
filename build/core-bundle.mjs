// What every esbuild bundle of core/ needs (build-electron.mjs, build-cli.mjs): a require() for
// bundled CommonJS-style code, `__spaDist` (the output folder's URL, from an entry or a chunk), and
// `import.meta.url` in core/ rewritten to the URL its source file has, so modules that find files
// relative to themselves (resources/, workers, the engine process) find them from a bundle too.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** The banner of an ESM bundle in a folder one level below the repository root (dist-electron/, dist-cli/). */
export const coreBanner = {
  js: [
    "import { createRequire as __spaCreateRequire } from 'node:module'; const require = __spaCreateRequire(import.meta.url);",
    "const __spaDist = (() => { const u = new URL('.', import.meta.url); return u.pathname.endsWith('/chunks/') ? new URL('..', u) : u; })();",
  ].join('\n'),
};

/**
 * core/ modules find files relative to their own source location (`import.meta.url`). Once bundled
 * they would all see the bundle's URL instead, so rewrite `import.meta.url` in core/ to the URL
 * the source file would have: <dist>/../core/....ts (same depth as in the repository and in app.asar).
 */
export function sourceUrlPlugin(root) {
  return {
    name: 'core-source-url',
    setup(build) {
      build.onLoad({ filter: /[\\/]core[\\/].*\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const rel = relative(root, args.path).split('\\').join('/');
        return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(`../${rel}`)}, __spaDist).href`), loader: 'ts' };
      });
    },
  };
}
