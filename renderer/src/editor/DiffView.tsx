// Side-by-side diff of two template versions with @codemirror/merge (read-only, unchanged
// regions collapsed). Line-level summary counts are computed from the merge chunks.
import { useEffect, useRef, useState, type ReactElement } from 'react';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { MergeView } from '@codemirror/merge';
import { syntaxHighlighting } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { json } from '@codemirror/lang-json';
import { shadowMount } from './shadow-host.js';
import './editor.css';

export interface DiffViewProps {
  a: string;
  b: string;
  aLabel: string;
  bLabel: string;
}

export default function DiffView({ a, b, aLabel, bLabel }: DiffViewProps): ReactElement {
  const host = useRef<HTMLDivElement>(null);
  const [changes, setChanges] = useState<number | null>(null);
  useEffect(() => {
    if (!host.current) return;
    const extensions = [
      EditorView.editable.of(false), EditorState.readOnly.of(true), EditorView.lineWrapping,
      syntaxHighlighting(classHighlighter), json(),
    ];
    const { root, mount } = shadowMount(host.current, 'diff-mount');
    const merge = new MergeView({
      root,
      parent: mount,
      a: { doc: a, extensions: [...extensions, EditorView.contentAttributes.of({ 'aria-label': aLabel })] },
      b: { doc: b, extensions: [...extensions, EditorView.contentAttributes.of({ 'aria-label': bLabel })] },
      collapseUnchanged: { margin: 3, minSize: 6 },
      highlightChanges: true,
      gutter: true,
    });
    setChanges(merge.chunks.length);
    return () => { merge.destroy(); mount.remove(); };
  }, [a, b, aLabel, bLabel]);
  return (
    <div className="template-diff-wrap">
      <div className="template-diff-labels"><span>{aLabel}</span><span>{bLabel}</span></div>
      <div className="template-diff" ref={host} data-testid="template-diff" data-chunks={changes ?? undefined} />
      <div className="template-status">{changes === null ? '' : changes === 0 ? 'identical' : `${changes} changed region${changes === 1 ? '' : 's'}`}</div>
    </div>
  );
}
