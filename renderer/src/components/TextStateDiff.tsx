// Text states in the trace inspector and the replay (text envs: TextWorld and the Python envs, whose boards are one `line` cell per
// line of text and say nothing drawn): the model's state text (its <prediction> or <observation>) against the true one as a word
// diff, with the similarity score. Words only in the model's text are struck through, words only in the truth are underlined;
// each run also carries a "−" / "+" mark and a screen-reader label, so the diff does not rest on colour (blue/orange pair, legible
// to the common colour-vision deficiencies, text contrast ≥ 7:1 on its background).
import { useMemo, type ReactElement } from 'react';
import type { Board, WmScore } from '../../../core/api/records.js';
import { normalisedEqual, wordDiff } from './word-diff.js';
import './text-diff.css';

/** A similarity a run recorded for this pair (e.g. RWML's embedding reward), shown in place of the normalised-exact result. */
export interface RecordedSimilarity { measure: 'embedding' | 'structured'; value: number; model?: string; threshold?: number }

/** True for the boards of text envs: every cell is a `line` of the state text (core/envs/python-env.ts textBoard). */
export function isTextBoard(board: Board | null | undefined): boolean {
  return !!board && board.rows > 0 && board.cells.every((row) => row.length > 0 && row.every((c) => c === 'line'));
}


const words = (n: number): string => `${n} word${n === 1 ? '' : 's'}`;

function percentText(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}

/** The score line: the recorded similarity when there is one, else exact after normalisation (and the share of equal lines). */
export function similarityText(model: string, truth: string, recorded?: RecordedSimilarity | null, score?: WmScore | null): string {
  if (recorded) {
    const what = recorded.measure === 'embedding' ? `embedding cosine${recorded.model ? ` (${recorded.model})` : ''}` : 'cell accuracy';
    const bar = recorded.threshold !== undefined ? `, reward ${recorded.value >= recorded.threshold ? 1 : 0} at threshold ${recorded.threshold}` : '';
    return `similarity ${recorded.value.toFixed(3)}: ${what}, as the run recorded it${bar}`;
  }
  const exact = normalisedEqual(model, truth);
  const lines = score && score.parsed ? ` · lines equal in place ${percentText(score.cellAccuracy)}` : '';
  return `exact after normalisation: ${exact ? 'yes' : 'no'}${lines} (no embedding similarity recorded for this turn)`;
}

export interface TextStateDiffProps {
  title: string;
  /** The model's text (null when the reply had no such block). */
  model: string | null;
  truth: string;
  /** What the model's text is called in the legend, e.g. "prediction". */
  modelLabel: string;
  truthLabel: string;
  score?: WmScore | null;
  recorded?: RecordedSimilarity | null;
  testId?: string;
}

/** The model's state text against the truth as one word diff: kept words plain, "−" model-only words, "+" truth-only words. */
export function TextStateDiff({ title, model, truth, modelLabel, truthLabel, score, recorded, testId }: TextStateDiffProps): ReactElement {
  const diff = useMemo(() => (model === null ? null : wordDiff(model, truth)), [model, truth]);
  return (
    <section className="text-diff" data-testid={testId} aria-label={title}>
      <div className="text-diff-head">
        <strong>{title}</strong>
        {model !== null && <span data-testid={testId ? `${testId}-score` : undefined}>{similarityText(model, truth, recorded, score)}</span>}
      </div>
      {diff === null ? (
        <>
          <div className="muted">(no {modelLabel} in the reply) · {truthLabel}:</div>
          <pre className="mono text-diff-plain">{truth}</pre>
        </>
      ) : (
        <>
          <div className="text-diff-legend faint">
            <del className="wd-del"><span className="wd-mark" aria-hidden="true">−</span>struck</del> only in the {modelLabel} ({words(diff.counts.del)}) ·{' '}
            <ins className="wd-ins"><span className="wd-mark" aria-hidden="true">+</span>underlined</ins> only in the {truthLabel} ({words(diff.counts.add)}) ·
            plain in both ({words(diff.counts.same)}){diff.tooLong ? ' · too long to align: shown whole' : ''}
          </div>
          <pre className="mono" data-testid={testId ? `${testId}-text` : undefined}>
            {diff.parts.map((p, i) => {
              if (p.kind === 'same') return <span key={i}>{p.text}</span>;
              const lead = /^\s*/.exec(p.text)![0];   // the space before a run stays outside its mark
              const body = p.text.slice(lead.length);
              const label = p.kind === 'del' ? modelLabel : truthLabel;
              const inner = <><span className="wd-sr">[only in the {label}: </span><span className="wd-mark" aria-hidden="true">{p.kind === 'del' ? '−' : '+'}</span>{body}<span className="wd-sr">]</span></>;
              return (
                <span key={i}>{lead}{p.kind === 'del'
                  ? <del className="wd-del" data-words={p.words}>{inner}</del>
                  : <ins className="wd-ins" data-words={p.words}>{inner}</ins>}</span>
              );
            })}
          </pre>
        </>
      )}
    </section>
  );
}
