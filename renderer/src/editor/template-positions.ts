// Template diagnostics from Liquid carry line/column inside one part's string (e.g. "state:
// tag "bad" not found" at line 1, column 4 of parts.state), while the editor shows the whole
// JSON source. This maps a part-relative position to the source position by walking the JSON
// string literal of that part (escapes such as \n and \uXXXX decoded as Liquid saw them).
export const TEMPLATE_PARTS = ['system', 'instruction', 'turn', 'reward', 'state', 'format'] as const;

export interface SourcePosition { line: number; column: number; offset: number }

function positionOf(source: string, offset: number): SourcePosition {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n'), offset };
}

/** Source offset of the opening quote of parts.<part>'s string value, or -1. */
function partStringStart(source: string, part: string): number {
  const partsKey = /"parts"\s*:\s*\{/.exec(source);
  const from = partsKey ? partsKey.index + partsKey[0].length : 0;
  const re = new RegExp(`"${part}"\\s*:\\s*"`, 'g');
  re.lastIndex = from;
  const m = re.exec(source);
  return m ? m.index + m[0].length - 1 : -1;
}

/** Map (line, column), one-based within the decoded string of parts.<part>, to the editor source. */
export function mapPartPosition(source: string, part: string, line: number, column: number): SourcePosition | null {
  const quote = partStringStart(source, part);
  if (quote < 0) return null;
  let decodedLine = 1;
  let decodedColumn = 1;
  let i = quote + 1;
  while (i < source.length) {
    if (decodedLine === line && decodedColumn === column) return positionOf(source, i);
    const ch = source[i]!;
    if (ch === '"') break; // end of the string literal
    let width = 1;
    let decoded = ch;
    if (ch === '\\') {
      const next = source[i + 1];
      if (next === 'u') { width = 6; decoded = String.fromCharCode(parseInt(source.slice(i + 2, i + 6), 16) || 0); }
      else { width = 2; decoded = next === 'n' ? '\n' : next === 'r' ? '\r' : next === 't' ? '\t' : next ?? ''; }
    }
    if (decoded === '\n') { decodedLine++; decodedColumn = 1; } else { decodedColumn++; }
    i += width;
  }
  // past the end of the string (e.g. "unexpected end"): point at the closing quote
  if (decodedLine === line) return positionOf(source, Math.min(i, source.length));
  return null;
}

export interface PositionedDiagnostic { message: string; line: number | null; column: number | null; severity: 'error' | 'warning' }

/** Rewrite diagnostics whose message names a template part ("state: …") to editor positions. */
export function toEditorDiagnostics<T extends PositionedDiagnostic>(source: string, diagnostics: T[]): T[] {
  return diagnostics.map((d) => {
    if (d.line === null) return d;
    const part = TEMPLATE_PARTS.find((p) => d.message.startsWith(`${p}: `) || d.message.startsWith(`parts.${p}: `));
    if (!part) return d;
    const mapped = mapPartPosition(source, part, d.line, d.column ?? 1);
    return mapped ? { ...d, line: mapped.line, column: mapped.column } : d;
  });
}
