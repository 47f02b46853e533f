// The per-user config folder (recent projects list). SPA_WORKBENCH_HOME overrides it (tests,
// portable installs); otherwise the platform's config location.
import * as os from 'node:os';
import * as path from 'node:path';

export function workbenchHome(): string {
  const override = process.env.SPA_WORKBENCH_HOME;
  if (override && override.trim()) return path.resolve(override);
  if (process.platform === 'win32') return path.join(process.env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'), 'spa-workbench');
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'spa-workbench');
  return path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'spa-workbench');
}
