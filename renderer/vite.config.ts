// Vite build of the renderer: one static bundle used by both hosts (Electron loads it through
// the app:// protocol, `serve` serves it over http). Works under the strict CSP in index.html:
// no inline scripts, no eval, CSS emitted as files, workers as separate module files.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

/** Folder of this file as a filesystem path (no Node imports: the renderer tsconfig has no Node types). */
function here(): string {
  const p = decodeURIComponent(new URL('.', import.meta.url).pathname);
  return /^\/[A-Za-z]:\//.test(p) ? p.slice(1) : p;
}

const root = here();

export default defineConfig({
  root,
  base: './',                       // relative asset URLs: works from app://, http:// and file://
  plugins: [react()],
  build: {
    outDir: `${root}../dist-renderer`,
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    modulePreload: { polyfill: false }, // the polyfill would be an inline script; Chromium has modulepreload
    chunkSizeWarningLimit: 2000,
    assetsInlineLimit: 0,           // never inline assets as data: URIs into JS/CSS
  },
  worker: { format: 'es' },
  server: { port: 5173, strictPort: false },
});
