// One glossary for every metric's tooltip: the tables of docs/metrics.md, read at build time (Vite's
// ?raw import), so the UI and the document cannot say different things. A row's first cell names one
// or more metrics in backticks (`eval/passAt1`, `eval/passAt<k>`); its second cell is the meaning.
import metricsDoc from '../../../docs/metrics.md?raw';

export interface GlossaryEntry { pattern: string; meaning: string }

/** The metric rows of a metrics.md text: each backticked name of a row's first cell with that row's meaning. */
export function parseGlossary(markdown: string): GlossaryEntry[] {
  const out: GlossaryEntry[] = [];
  for (const line of markdown.split('\n')) {
    const m = /^\|\s*(`[^|]*`[^|]*)\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (!m) continue;
    const meaning = m[2]!.replace(/`/g, '').replace(/\\\|/g, '|');
    for (const name of m[1]!.matchAll(/`([^`]+)`/g)) out.push({ pattern: name[1]!, meaning });
  }
  return out;
}

const toRegExp = (pattern: string) =>
  new RegExp(`^${pattern.split(/<[^>]+>/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);

export function lookupIn(entries: GlossaryEntry[], metric: string): string | null {
  const exact = entries.find((e) => e.pattern === metric);
  if (exact) return exact.meaning;
  return entries.find((e) => e.pattern.includes('<') && toRegExp(e.pattern).test(metric))?.meaning ?? null;
}

export const GLOSSARY: GlossaryEntry[] = parseGlossary(metricsDoc);

/** A metric's meaning from docs/metrics.md, or null when the document does not name it. */
export function metricMeaning(metric: string): string | null { return lookupIn(GLOSSARY, metric); }
