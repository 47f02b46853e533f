// React wrapper of a CodeMirror 6 view for template sources (JSON with Liquid strings).
// Uncontrolled inside: the doc is replaced only when `value` changes from outside (loading
// another version); typing reports through onChange. Diagnostics are drawn as squiggles,
// gutter markers and hover text.
import { useEffect, useRef, type ReactElement } from 'react';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { resetHistory, setDiagnostics, templateEditorExtensions, type EditorDiagnostic } from './codemirror-setup.js';
import { shadowMount } from './shadow-host.js';
import './editor.css';

export interface CodeEditorProps {
  value: string;
  onChange?: (value: string) => void;
  diagnostics?: EditorDiagnostic[];
  readOnly?: boolean;
  ariaLabel?: string;
  testId?: string;
  /** Receives the view (e.g. for tests and "go to line"). */
  onView?: (view: EditorView | null) => void;
}

export default function CodeEditor({ value, onChange, diagnostics, readOnly, ariaLabel, testId, onView }: CodeEditorProps): ReactElement {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const { root, mount } = shadowMount(host.current, 'editor-mount');
    const v = new EditorView({
      root,
      parent: mount,
      state: EditorState.create({
        doc: value,
        extensions: templateEditorExtensions({ readOnly, ariaLabel, onChange: (doc) => onChangeRef.current?.(doc) }),
      }),
    });
    view.current = v;
    onView?.(v);
    return () => { v.destroy(); mount.remove(); view.current = null; onView?.(null); };
    // the view is created once per readOnly/ariaLabel; value and diagnostics are pushed below
  }, [readOnly, ariaLabel]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const current = v.state.doc.toString();
    if (current !== value) {
      v.dispatch({ changes: { from: 0, to: current.length, insert: value }, annotations: resetHistory.of(true) });
    }
  }, [value]);

  useEffect(() => {
    view.current?.dispatch({ effects: setDiagnostics.of(diagnostics ?? []) });
  }, [diagnostics, value]);

  return <div className="template-editor" ref={host} data-testid={testId} />;
}
