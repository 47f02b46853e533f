// Security policy of the desktop shell, as plain functions (no Electron import) so that tests
// can check them without the Electron binary: the CSP, which origins may call the API, and
// how app:// URLs map to files of the renderer build (no path traversal).

/** The renderer is served from this privileged, standard, secure custom scheme. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'bundle';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/** Strict Content-Security-Policy: no inline scripts, no eval, nothing remote. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Origin of a URL, or null when it does not parse. */
export function originOf(url: string | undefined | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    // app://bundle/... has origin "null" in the WHATWG parser for non-special schemes; rebuild it.
    return u.origin !== 'null' ? u.origin : `${u.protocol}//${u.host}`;
  } catch {
    return null;
  }
}

/**
 * May a frame at `frameUrl` use the API? Only the app's own origin (or the Vite dev server
 * origin in development) — never a navigated-away page, an iframe or a remote site.
 */
export function isTrustedOrigin(frameUrl: string | undefined | null, devServerUrl?: string | null): boolean {
  const origin = originOf(frameUrl);
  if (!origin) return false;
  if (origin === APP_ORIGIN) return true;
  const dev = originOf(devServerUrl ?? null);
  return dev !== null && origin === dev;
}

/**
 * Map an app:// request URL to a relative file path inside the renderer build, or null when it
 * points outside it. `/` maps to index.html.
 */
export function resolveAppPath(requestUrl: string): string | null {
  let u: URL;
  try { u = new URL(requestUrl); } catch { return null; }
  if (`${u.protocol}//${u.host}` !== APP_ORIGIN) return null;
  let path: string;
  try { path = decodeURIComponent(u.pathname); } catch { return null; }
  if (path.includes('\0') || path.includes('\\')) return null;
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') return null;
    parts.push(part);
  }
  return parts.length === 0 ? 'index.html' : parts.join('/');
}

const MIME: Record<string, string> = {
  html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8', json: 'application/json', map: 'application/json', svg: 'image/svg+xml',
  png: 'image/png', ico: 'image/x-icon', wasm: 'application/wasm', woff2: 'font/woff2', txt: 'text/plain; charset=utf-8',
};
export function mimeType(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return MIME[ext] ?? 'application/octet-stream';
}

/**
 * The renderer's dev server (SPA_WORKBENCH_DEV_URL, e.g. http://localhost:5173 from
 * `npm run dev:renderer`), honoured only in an unpackaged app and only on a loopback http(s)
 * address: a packaged app always loads its own bundle, whatever the environment says, so no
 * environment variable can hand the full API to another page.
 */
export function devServerUrlFor(value: string | undefined | null, isPackaged: boolean): string | null {
  if (isPackaged || !value) return null;
  let u: URL;
  try { u = new URL(value); } catch { return null; }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  return loopback ? u.origin : null;
}

/** Headers of every app:// response, errors included: the CSP and no MIME sniffing. */
export function appResponseHeaders(contentType: string): Record<string, string> {
  return { 'content-type': contentType, 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff' };
}
