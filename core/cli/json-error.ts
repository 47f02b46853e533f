// JSON.parse reports a byte position ("... in JSON at position 211") on Node 20; people edit
// files by line and column. This rewrites the message with the line, the column and the line itself.

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/** The parse error of `text` as "line L, column C: <reason>" plus the offending line and a caret. */
export function describeJsonError(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const m = /at position (\d+)(?: \(line \d+ column \d+\))?/.exec(message);
  const offset = m ? Number(m[1]) : /Unexpected end of JSON input/.test(message) ? text.length : null;
  if (offset === null) return message;
  const { line, column } = lineColumn(text, offset);
  const reason = m ? message.replace(m[0], '').replace(/\s+in JSON\s*$/, '').trim() : message;
  const source = (text.split('\n')[line - 1] ?? '').replace(/\t/g, ' ');
  const shown = source.length > 120 ? source.slice(Math.max(0, column - 60), column + 60) : source;
  const caretAt = source.length > 120 ? Math.min(column - 1, 60) : column - 1;
  return `line ${line}, column ${column}: ${reason}\n    ${shown}\n    ${' '.repeat(Math.max(0, caretAt))}^`;
}
