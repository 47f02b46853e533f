// Unmeasured stages are "not measured yet", never "about 0s" (issue 37 item 4): the New Run
// estimate and the run ETA; and the model-folder field's GGUF check.
import { describe, expect, it } from 'vitest';
import { estimateTotalText } from '../../renderer/src/views/NewRunView.js';
import { fmtRunEta } from '../../renderer/src/views/RunView.js';
import { importFolderFor, isGgufPath } from '../../renderer/src/components/GgufImport.js';

const stage = (name: string, seconds: number | null, source: string | null = seconds === null ? null : 'median of 1 earlier run here') => ({ name, seconds, source });

describe('estimate in words', () => {
  it('names the unmeasured stages instead of summing them as 0 s', () => {
    // smoke before any smoke run: the shipped base is copied (1 s), nothing else measured
    expect(estimateTotalText({ seconds: 1, unestimated: ['selfplay', 'sft', 'rl', 'eval'],
      stages: [stage('bootstrap', 1, 'the shipped base (fl), copied'), stage('selfplay', null), stage('sft', null), stage('rl', null), stage('eval', null)] }))
      .toBe('not measured yet (selfplay, sft, rl, eval)');
    expect(estimateTotalText({ seconds: 0, unestimated: ['sft'], stages: [stage('selfplay', 0.2), stage('sft', null)] })).toBe('not measured yet (sft)');
    expect(estimateTotalText({ seconds: 244, unestimated: [], stages: [stage('sft', 200), stage('eval', 44)] })).toBe('about 4m 04s');
    expect(estimateTotalText({ seconds: 200, unestimated: ['rl'], stages: [stage('sft', 200), stage('rl', null)] })).toBe('about 3m 20s + rl not measured yet');
    expect(estimateTotalText({ seconds: null, unestimated: [], stages: [] })).toBe('not measured yet');
  });

  it('the run ETA does not read "0s + 2 stages"', () => {
    expect(fmtRunEta({ seconds: 0, unestimated: 2 })).toBe('run ETA: 2 stages not measured yet');
    expect(fmtRunEta({ seconds: 75, unestimated: 1 })).toBe('run ETA 1m 15s + 1 stage not measured yet');
    expect(fmtRunEta({ seconds: 75, unestimated: 0 })).toBe('run ETA 1m 15s');
  });
});

describe('GGUF path', () => {
  it('is recognised by its extension, with the folder an import writes', () => {
    expect(isGgufPath('/m/SmolLM2-135M.Q4_1.gguf')).toBe(true);
    expect(isGgufPath('/m/x.GGUF ')).toBe(true);
    expect(isGgufPath('/m/SmolLM2')).toBe(false);
    expect(isGgufPath(undefined)).toBe(false);
    expect(importFolderFor('/m/SmolLM2-135M.Q4_1.gguf')).toBe('/m/SmolLM2-135M.Q4_1');
  });
});
