// Links that survive a restart of `serve`: the access token and port last used for a project are
// remembered in the per-user config folder (serve-links.json, readable by the user only), so a
// bookmarked or open tab reconnects to the restarted server by itself. `--token` sets the token,
// `--new-token` replaces the remembered one, an explicit `--port` wins over the remembered port.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { workbenchHome } from '../storage/home.js';
import { writeJsonAtomicSync } from '../storage/atomic.js';

export const SERVE_LINKS_FILE = 'serve-links.json';
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

export interface ServeLink { token: string; port: number }

/** Problem with a user-given token, or null when it is fine. */
export function checkToken(token: string): string | null {
  if (TOKEN_PATTERN.test(token)) return null;
  const other = /[^A-Za-z0-9_-]/.test(token) ? ' with other characters' : '';
  return `--token: expected 16 to 128 characters of A-Z, a-z, 0-9, "_" or "-", received ${token.length} character(s)${other}`;
}

function linksFile(): string { return path.join(workbenchHome(), SERVE_LINKS_FILE); }

function readLinks(): Record<string, ServeLink> {
  try {
    const v = JSON.parse(fs.readFileSync(linksFile(), 'utf8')) as Record<string, ServeLink>;
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch { return {}; }
}

/** The remembered link of a project folder ('' = serve without a project), if any. */
export function rememberedLink(project: string): ServeLink | null {
  const l = readLinks()[project];
  return l && typeof l.token === 'string' && TOKEN_PATTERN.test(l.token) && Number.isInteger(l.port) ? l : null;
}

/** The token to use: given, else remembered (unless renewing), else a new random one. */
export function chooseToken(project: string, given: string | undefined, renew: boolean): string {
  if (given !== undefined) return given;
  const remembered = renew ? null : rememberedLink(project);
  return remembered?.token ?? randomBytes(24).toString('hex');
}

export function rememberLink(project: string, link: ServeLink): void {
  const links = readLinks();
  links[project] = link;
  try {
    fs.mkdirSync(workbenchHome(), { recursive: true });
    writeJsonAtomicSync(linksFile(), links);
    fs.chmodSync(linksFile(), 0o600);
  } catch { /* a read-only home: links just do not survive restarts */ }
}
