import { describe, expect, it } from 'vitest';
import { inflateSync } from 'node:zlib';
import { crc32, encodePng, lineChartPng } from '../../core/eval/png-chart.js';
import { collapseSignals, longestRepeatedRun } from '../../core/train/collapse.js';

describe('PNG chart', () => {
  it('crc32 matches the standard check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });
  it('encodes a decodable PNG with the right pixels', () => {
    const rgba = new Uint8Array([255, 0, 0, 255, 0, 255, 0, 255]);
    const png = encodePng(2, 1, rgba);
    expect([...png.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
    const idatLen = png.readUInt32BE(33);
    expect(png.toString('ascii', 37, 41)).toBe('IDAT');
    const raw = inflateSync(png.subarray(41, 41 + idatLen));
    expect([...raw]).toEqual([0, 255, 0, 0, 255, 0, 255, 0, 255]);
  });
  it('draws lines (non-white pixels) for a chart', () => {
    const png = lineChartPng([{ name: 'a', points: [[0, 0], [1, 1]] }], { width: 200, height: 120, title: 'T' });
    expect(png.readUInt32BE(16)).toBe(200);
    const raw = inflateSync(png.subarray(41, 41 + png.readUInt32BE(33)));
    let coloured = 0;
    for (let i = 0; i < raw.length; i++) if (raw[i] !== 255 && raw[i] !== 0) coloured++;
    expect(coloured).toBeGreaterThan(100);
  });
});

describe('collapse signals', () => {
  it('repeated runs and diversity', () => {
    expect(longestRepeatedRun('abcabcabc')).toBe(9);
    expect(longestRepeatedRun('aaaa')).toBe(4);
    expect(longestRepeatedRun('abcd')).toBe(0);
    const s = collapseSignals([{ puzzle: 'p1', turn: 0, response: 'x' }, { puzzle: 'p2', turn: 0, response: 'x' }],
      [{ puzzle: 'p1', answer: 'Up' }, { puzzle: 'p2', answer: 'up' }, { puzzle: 'p3', answer: 'Left' }]);
    expect(s.distinctResponseRatio).toBe(0.5);
    expect(s.crossPuzzleAnswerOverlap).toBeCloseTo(2 / 3, 12);
    expect(s.inputDependence).toBeCloseTo(1 / 3, 12);
  });
});
