// CodeMirror 6 setup for the template editor: JSON language, line numbers, our own diagnostics
// (squiggle + gutter marker + hover text; @codemirror/lint is not installed), a small undo
// history (@codemirror/commands is not installed), class-based highlighting so colours come
// from editor.css (theme variables, strict CSP: CodeMirror's own base styles go through
// constructable stylesheets, no inline <style> needed in Chromium/Electron).
import { ChangeSet, EditorState, StateEffect, StateField, Annotation, type Extension, type Text } from '@codemirror/state';
import {
  Decoration, EditorView, GutterMarker, gutter, hoverTooltip, keymap, lineNumbers, highlightActiveLine,
  highlightActiveLineGutter, drawSelection, type DecorationSet,
} from '@codemirror/view';
import { bracketMatching, syntaxHighlighting, indentOnInput } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { json } from '@codemirror/lang-json';

export interface EditorDiagnostic {
  message: string;
  line: number | null;     // one-based; null = not tied to a position
  column: number | null;   // one-based
  severity: 'error' | 'warning';
}

interface PlacedDiagnostic { from: number; to: number; line: number; message: string; severity: 'error' | 'warning' }

/** Map one-based line/column to a document range (to the end of the word at that position, at least one character). */
export function placeDiagnostic(doc: Text, d: EditorDiagnostic): PlacedDiagnostic | null {
  if (d.line === null || !Number.isFinite(d.line)) return null;
  const lineNo = Math.min(Math.max(1, Math.trunc(d.line)), doc.lines);
  const line = doc.line(lineNo);
  const col = Math.max(1, Math.trunc(d.column ?? 1));
  const from = Math.min(line.from + col - 1, line.to);
  const rest = doc.sliceString(from, line.to);
  const word = /^[\w$.-]+/.exec(rest)?.[0].length ?? 0;
  const to = Math.min(line.to, from + Math.max(1, word));
  return { from: Math.min(from, to), to, line: lineNo, message: d.message, severity: d.severity };
}

export const setDiagnostics = StateEffect.define<EditorDiagnostic[]>();

const diagnosticsField = StateField.define<{ placed: PlacedDiagnostic[]; decorations: DecorationSet }>({
  create: () => ({ placed: [], decorations: Decoration.none }),
  update(value, tr) {
    let next = value;
    for (const effect of tr.effects) {
      if (effect.is(setDiagnostics)) {
        const placed = effect.value.map((d) => placeDiagnostic(tr.state.doc, d)).filter((p): p is PlacedDiagnostic => p !== null)
          .sort((a, b) => a.from - b.from || a.to - b.to);
        const ranges = [];
        for (const p of placed) {
          ranges.push(Decoration.line({ class: `cm-diag-line cm-diag-line-${p.severity}` }).range(tr.state.doc.line(p.line).from));
          if (p.to > p.from) ranges.push(Decoration.mark({ class: `cm-diag cm-diag-${p.severity}`, attributes: { 'data-diagnostic': p.message } }).range(p.from, p.to));
        }
        next = { placed, decorations: Decoration.set(ranges, true) };
      }
    }
    if (tr.docChanged && next === value) {
      next = {
        placed: value.placed.map((p) => ({ ...p, from: tr.changes.mapPos(p.from), to: tr.changes.mapPos(p.to, 1) })),
        decorations: value.decorations.map(tr.changes),
      };
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field, (v) => v.decorations),
});

class DiagnosticMarker extends GutterMarker {
  constructor(readonly severity: 'error' | 'warning', readonly message: string) { super(); }
  override eq(other: GutterMarker): boolean {
    return other instanceof DiagnosticMarker && other.severity === this.severity && other.message === this.message;
  }
  override toDOM(): Node {
    const span = document.createElement('span');
    span.className = `cm-diag-marker cm-diag-marker-${this.severity}`;
    span.textContent = this.severity === 'error' ? '●' : '▲';
    span.title = this.message;
    return span;
  }
}

const diagnosticGutter = gutter({
  class: 'cm-diag-gutter',
  lineMarker(view, line) {
    const placed = view.state.field(diagnosticsField).placed;
    const here = placed.filter((p) => p.from >= line.from && p.from <= line.to);
    if (here.length === 0) return null;
    const severity = here.some((p) => p.severity === 'error') ? 'error' : 'warning';
    return new DiagnosticMarker(severity, here.map((p) => p.message).join('\n'));
  },
  lineMarkerChange: (update) => update.transactions.some((tr) => tr.effects.some((e) => e.is(setDiagnostics))),
  initialSpacer: () => new DiagnosticMarker('error', ''),
});

const diagnosticHover = hoverTooltip((view, pos) => {
  const placed = view.state.field(diagnosticsField).placed.filter((p) => pos >= p.from && pos <= p.to);
  if (placed.length === 0) return null;
  return {
    pos: placed[0]!.from,
    end: placed[0]!.to,
    above: true,
    create() {
      const dom = document.createElement('div');
      dom.className = 'cm-diag-tooltip';
      dom.textContent = placed.map((p) => p.message).join('\n');
      return { dom };
    },
  };
});

// ---- a small undo history --------------------------------------------------------------

interface HistoryEntry { inverse: ChangeSet; time: number }
interface HistoryState { done: HistoryEntry[]; undone: HistoryEntry[] }
const fromHistory = Annotation.define<boolean>();
const setHistory = StateEffect.define<HistoryState>();
/** Annotation for programmatic document replacements that should clear the history (loading another version). */
export const resetHistory = Annotation.define<boolean>();

const historyField = StateField.define<HistoryState>({
  create: () => ({ done: [], undone: [] }),
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setHistory)) return effect.value;
    if (!tr.docChanged || tr.annotation(fromHistory)) return value;
    if (tr.annotation(resetHistory)) return { done: [], undone: [] };
    const inverse = tr.changes.invert(tr.startState.doc);
    const last = value.done[value.done.length - 1];
    const now = Date.now();
    if (last && now - last.time < 600) {
      // group quick typing into one undo step: undo this change, then the earlier one
      return { done: [...value.done.slice(0, -1), { inverse: inverse.compose(last.inverse), time: now }], undone: [] };
    }
    return { done: [...value.done.slice(-199), { inverse, time: now }], undone: [] };
  },
});

function undoRedo(view: EditorView, direction: 'undo' | 'redo'): boolean {
  const state = view.state.field(historyField);
  const stack = direction === 'undo' ? state.done : state.undone;
  const entry = stack[stack.length - 1];
  if (!entry) return false;
  const back: HistoryEntry = { inverse: entry.inverse.invert(view.state.doc), time: 0 };
  const next: HistoryState = direction === 'undo'
    ? { done: state.done.slice(0, -1), undone: [...state.undone, back] }
    : { done: [...state.done, back], undone: state.undone.slice(0, -1) };
  view.dispatch({ changes: entry.inverse, annotations: fromHistory.of(true), effects: setHistory.of(next), scrollIntoView: true });
  return true;
}

export interface EditorSetupOptions {
  readOnly?: boolean;
  ariaLabel?: string;
  onChange?: (doc: string) => void;
}

/** Extensions of the template editor. */
export function templateEditorExtensions(options: EditorSetupOptions = {}): Extension[] {
  return [
    lineNumbers(),
    highlightActiveLineGutter(),
    diagnosticGutter,
    drawSelection(),
    highlightActiveLine(),
    indentOnInput(),
    bracketMatching(),
    syntaxHighlighting(classHighlighter),
    json(),
    EditorView.lineWrapping,
    diagnosticsField,
    diagnosticHover,
    historyField,
    keymap.of([
      { key: 'Mod-z', run: (view) => undoRedo(view, 'undo'), preventDefault: true },
      { key: 'Mod-y', run: (view) => undoRedo(view, 'redo'), preventDefault: true },
      { key: 'Mod-Shift-z', run: (view) => undoRedo(view, 'redo'), preventDefault: true },
    ]),
    EditorState.readOnly.of(options.readOnly === true),
    EditorView.editable.of(options.readOnly !== true),
    EditorView.contentAttributes.of({ 'aria-label': options.ariaLabel ?? 'Template source', spellcheck: 'false' }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && options.onChange) options.onChange(update.state.doc.toString());
    }),
  ];
}
