// Light / dark theme: stored in localStorage, defaults to the system preference, applied as
// [data-theme] on <html> so that theme.css variables switch. Charts read colours from CSS.
export type ThemeName = 'light' | 'dark';

const KEY = 'spa-workbench.theme';

export function initialTheme(): ThemeName {
  try {
    const saved = localStorage.getItem(KEY);
    if (saved === 'light' || saved === 'dark') return saved;
  } catch { /* storage unavailable */ }
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: ThemeName): void {
  document.documentElement.dataset['theme'] = theme;
  try { localStorage.setItem(KEY, theme); } catch { /* storage unavailable */ }
}

/** Read a CSS variable of the current theme (e.g. `--series-1`). */
export function cssVar(name: string, fallback = '#888'): string {
  if (typeof document === 'undefined') return fallback;
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

/** Colour of the i-th overlaid series in the current theme. */
export function seriesColor(i: number): string {
  return cssVar(`--series-${(i % 8) + 1}`, ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#c026d3', '#4d7c0f'][i % 8]!);
}
