// A run's own labels: rename, tags and notes (runs.update; the CLI's `update` does the same).
// Read-only projects (watched while another process holds them) show them without editing.
import { useEffect, useState, type ReactElement } from 'react';
import type { RunSummary } from '../../../core/api/contract.js';
import type { Client } from '../api/client.js';

export interface RunLabelsProps {
  client: Client;
  run: Pick<RunSummary, 'id' | 'name' | 'tags' | 'notes'>;
  readOnly: boolean;
  onChanged: (run: RunSummary) => void;
  onError: (error: unknown) => void;
}

export function RunTitle({ client, run, readOnly, onChanged, onError }: RunLabelsProps): ReactElement {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(run.name);
  useEffect(() => setName(run.name), [run.name]);
  const save = () => {
    const next = name.trim();
    setEditing(false);
    if (!next || next === run.name) { setName(run.name); return; }
    client.runs.update({ runId: run.id, name: next }).then(onChanged, onError);
  };
  if (editing) {
    return (
      <input autoFocus className="run-name-input" value={name} aria-label="Run name" data-testid="run-name-input" maxLength={200}
        onChange={(e) => setName(e.target.value)} onBlur={save}
        onKeyDown={(e) => { if (e.key === 'Enter') save(); if (e.key === 'Escape') { setName(run.name); setEditing(false); } }} />
    );
  }
  return (
    <h1 style={{ margin: 0 }} data-testid="run-name" title={readOnly ? run.name : 'Click to rename'}
      onClick={() => { if (!readOnly) setEditing(true); }} className={readOnly ? '' : 'editable'}>{run.name}</h1>
  );
}

export function RunTagsNotes({ client, run, readOnly, onChanged, onError }: RunLabelsProps): ReactElement {
  const tags = run.tags ?? [];
  const [newTag, setNewTag] = useState('');
  const [notes, setNotes] = useState(run.notes ?? '');
  useEffect(() => setNotes(run.notes ?? ''), [run.notes]);
  const setTags = (next: string[]) => client.runs.update({ runId: run.id, tags: next }).then(onChanged, onError);
  const addTag = () => {
    const parts = newTag.split(',').map((t) => t.trim()).filter(Boolean);
    setNewTag('');
    if (parts.length) void setTags([...tags, ...parts.filter((t) => !tags.includes(t))]);
  };
  return (
    <div className="run-labels" data-testid="run-labels">
      <div className="row" style={{ gap: 6, flexWrap: 'wrap' }}>
        <span className="faint">tags</span>
        {tags.length === 0 && readOnly && <span className="faint">none</span>}
        {tags.map((t) => (
          <span key={t} className="badge" data-testid="run-tag">{t}{!readOnly && <a onClick={() => void setTags(tags.filter((x) => x !== t))} aria-label={`remove tag ${t}`}> ✕</a>}</span>
        ))}
        {!readOnly && (
          <input value={newTag} placeholder="add tag" style={{ width: 110 }} data-testid="add-tag" aria-label="Add a tag"
            onChange={(e) => setNewTag(e.target.value)} onKeyDown={(e) => { if (e.key === 'Enter') addTag(); }} onBlur={() => { if (newTag.trim()) addTag(); }} />
        )}
      </div>
      <details open={!!run.notes} style={{ marginTop: 4 }}>
        <summary className="muted">notes{run.notes ? '' : ' (none)'}</summary>
        {readOnly ? <div className="notes-text" data-testid="run-notes">{run.notes || <span className="faint">No notes.</span>}</div> : (
          <textarea value={notes} rows={3} style={{ width: '100%', maxWidth: 720 }} data-testid="run-notes" aria-label="Run notes"
            placeholder="What this run tries, what you saw…" onChange={(e) => setNotes(e.target.value)}
            onBlur={() => { if (notes !== (run.notes ?? '')) client.runs.update({ runId: run.id, notes }).then(onChanged, onError); }} />
        )}
      </details>
    </div>
  );
}
