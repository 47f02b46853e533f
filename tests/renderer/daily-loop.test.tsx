// @vitest-environment jsdom
// Headline numbers that say what they are (eval vs training rollouts; n/a over zero well-formed
// turns), runs grouped with mean ± sd and Pass@k by k, the run's labels editor.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { RunSummary } from '../../core/api/contract.js';
import { fmtWmAccuracy, keyMetrics } from '../../renderer/src/components/key-metrics.js';
import { fmtPct } from '../../renderer/src/components/format.js';
import { fmtStat, groupRuns, meanSd, passAtKs, studyOf } from '../../renderer/src/components/run-groups.js';
import { RunTagsNotes, RunTitle } from '../../renderer/src/components/RunLabels.js';
import type { Client } from '../../renderer/src/api/client.js';
import { StageSamples } from '../../renderer/src/components/StageSamples.js';

afterEach(cleanup);

const summary = (id: string, latest: Record<string, number>, extra: Partial<RunSummary> = {}): RunSummary => ({
  id, name: id, method: 'spa', env: 'sokoban', size: 'smoke', preset: 'spa', templateHash: null, status: 'completed', reason: null,
  createdAt: 0, startedAt: null, finishedAt: null, durationMs: 0, attempts: 1, stages: [], progress: null, latest, ...extra,
});

describe('headline numbers', () => {
  it('world-model accuracy over zero well-formed turns is n/a, not 0%', () => {
    const none = keyMetrics({ 'eval/wmTurns': 0, 'eval/success': 0 });
    expect(fmtWmAccuracy(none, fmtPct)).toBe('n/a (0 well-formed turns)');
    // an older run that logged 0 with the count 0 is n/a too
    expect(fmtWmAccuracy(keyMetrics({ 'eval/wmPredictionCellAccuracy': 0, 'eval/wmTurns': 0 }), fmtPct)).toBe('n/a (0 well-formed turns)');
    expect(fmtWmAccuracy(keyMetrics({ 'eval/wmPredictionCellAccuracy': 0.58, 'eval/wmTurns': 12 }), fmtPct)).toBe('58.0%');
    expect(fmtWmAccuracy(keyMetrics({}), fmtPct)).toBe('–');
    expect(fmtWmAccuracy(keyMetrics({ 'eval/wmPredictionCellAccuracy': 0, 'eval/formatErrorRate': 1 }), fmtPct)).toBe('n/a (0 well-formed turns)');   // logged before wmTurns
  });

  it('says where each number comes from: the evaluation, or the training rollouts', () => {
    expect(keyMetrics({ 'eval/success': 0.5, 'rollout/success': 0.9 })).toMatchObject({ success: 0.5, successSource: 'eval' });
    expect(keyMetrics({ 'rollout/success': 0.9, 'rl/passAt1': 0.2, 'rl/passAt4': 0.4 })).toMatchObject({ success: 0.9, successSource: 'rollout', passSource: 'rl', k: 4 });
    expect(keyMetrics({ 'rollout/wmPredictionCellAccuracy': 0.7, 'rollout/wmTurns': 3 })).toMatchObject({ wmSource: 'rollout', wmTurns: 3 });
    // an evaluation with 0 well-formed turns decides: n/a, not the training rollouts' number
    expect(fmtWmAccuracy(keyMetrics({ 'eval/wmTurns': 0, 'rollout/wmPredictionCellAccuracy': 0.7, 'rollout/wmTurns': 3 }), fmtPct)).toBe('n/a (0 well-formed turns)');
  });
});

describe('grouped runs', () => {
  it('mean ± sd per group, Pass@k kept apart by k, tags in each of their groups, study from the name', () => {
    expect(meanSd([0.2, 0.4])!.mean).toBeCloseTo(0.3);
    expect(meanSd([0.2, 0.4])!.sd).toBeCloseTo(Math.sqrt(0.02));
    expect(meanSd([])).toBeNull();
    expect(passAtKs({ 'rl/passAt4': 0.5, 'eval/passAt2': 0.3, 'eval/passAt4': 0.6, 'eval/passAt1': 0.1 })).toEqual({ 2: 0.3, 4: 0.6 });
    const runs = [
      summary('a', { 'eval/success': 0.2, 'eval/passAt2': 0.3 }, { tags: ['base', 'lr'] }),
      summary('b', { 'eval/success': 0.4, 'eval/passAt4': 0.5 }, { tags: ['base'], method: 'vanilla-rl' }),
      summary('c', { 'eval/success': 1 }, { name: 'study:grid:spa:sokoban:0' }),
    ];
    const byTag = groupRuns(runs, 'tag');
    expect(byTag.map((g) => [g.key, g.runIds])).toEqual([['(untagged)', ['c']], ['base', ['a', 'b']], ['lr', ['a']]]);
    const base = byTag[1]!;
    expect(base.success!.mean).toBeCloseTo(0.3);
    expect(Object.keys(base.passAtK)).toEqual(['2', '4']);            // k=2 and k=4 never mixed
    expect(base.passAtK[2]!.n).toBe(1);
    expect(fmtStat(base.success)).toBe('30.0 ± 14.1% (n=2)');
    expect(groupRuns(runs, 'method').map((g) => g.key)).toEqual(['spa', 'vanilla-rl']);
    expect(studyOf(runs[2]!)).toBe('grid');
    expect(groupRuns(runs, 'study').map((g) => g.key)).toEqual(['(not in a study)', 'grid']);
    expect(groupRuns([summary('p', {}, { params: { 'stages.rl.lr': 0.001 } }), summary('q', {})], 'param:stages.rl.lr').map((g) => g.key)).toEqual(['(default)', '0.001']);
  });
});

describe('run labels', () => {
  it('renames on Enter and adds a tag through runs.update; read-only shows no editors', async () => {
    const update = vi.fn(async (req: { runId: string; name?: string; tags?: string[] }) => summary(req.runId, {}, { name: req.name ?? 'old', tags: req.tags ?? [] }));
    const client = { runs: { update } } as unknown as Client;
    const changed = vi.fn();
    const run = { id: 'r1', name: 'old', tags: ['x'] };
    render(<><RunTitle client={client} run={run} readOnly={false} onChanged={changed} onError={() => {}} /><RunTagsNotes client={client} run={run} readOnly={false} onChanged={changed} onError={() => {}} /></>);
    fireEvent.click(screen.getByTestId('run-name'));
    fireEvent.change(screen.getByTestId('run-name-input'), { target: { value: 'new name' } });
    fireEvent.keyDown(screen.getByTestId('run-name-input'), { key: 'Enter' });
    await waitFor(() => expect(update).toHaveBeenCalledWith({ runId: 'r1', name: 'new name' }));
    fireEvent.change(screen.getByTestId('add-tag'), { target: { value: 'baseline' } });
    fireEvent.keyDown(screen.getByTestId('add-tag'), { key: 'Enter' });
    await waitFor(() => expect(update).toHaveBeenCalledWith({ runId: 'r1', tags: ['x', 'baseline'] }));
    expect(changed).toHaveBeenCalledTimes(2);
    cleanup();
    render(<RunTagsNotes client={client} run={run} readOnly onChanged={changed} onError={() => {}} />);
    expect(screen.queryByTestId('add-tag')).toBeNull();
    expect(screen.getAllByTestId('run-tag')[0]!.textContent).toBe('x');
  });
});

describe('sample generations in the run view', () => {
  it('shows what the model wrote beside the target, well-formed or not; says when there are none yet', async () => {
    const sample = { stage: 'sft', step: 8, time: 0, prompt: 'Turn 1: …', target: '<think><observation>#P#</observation></think><answer>Up</answer>', generated: '<think>xx', wellFormed: false };
    const samples = vi.fn(async () => ({ samples: [sample], total: 1 }));
    render(<StageSamples client={{ runs: { samples } } as unknown as Client} runId="r1" active={false} />);
    await waitFor(() => expect(screen.getByTestId('stage-sample')).toBeTruthy());
    expect(screen.getByTestId('stage-sample').textContent).toContain('sft · step 8');
    expect(screen.getByTestId('stage-sample').textContent).toContain('not well-formed');
    expect(screen.getByTestId('sample-generated').textContent).toBe('<think>xx');
    expect(samples).toHaveBeenCalledWith({ runId: 'r1', limit: 20 });
    cleanup();
    render(<StageSamples client={{ runs: { samples: async () => ({ samples: [], total: 0 }) } } as unknown as Client} runId="r1" active={false} />);
    await waitFor(() => expect(screen.getByTestId('samples-empty')).toBeTruthy());
  });
});
