// The New Run form's memory estimate for a model folder (issue 37 item 4): the memory model's peak
// per stage (core/engine/memory-model.ts, the torch worker on CUDA) for the folder's config.json and
// the run's resolved settings, the 24 / 48 / 80 GiB cards it fits with the measured margin, and the
// smallest GPU size whose card fits. Null when the run has no model folder or its config.json does
// not give a shape (the folder check names what is wrong when the run loads it).
import { readRegularTextSync } from '../util/regular-file.js';
import { join } from 'node:path';
import type { RunConfig } from '../api/run-config.js';
import type { RunEstimate } from '../api/contract.js';
import {
  CARDS_GIB, CUDA_PATH, ENGINE_MEASURED_MARGIN, fitsCard, gib, parameterCount, planFromConfig, runPeak, shapeFromHfConfig, stagePeaks,
  STAGE_TITLES, type StageName,
} from './memory-model.js';
import { GPU_SIZE_CARD_GIB, GPU_SIZES } from './presets.js';

/** Largest config.json read (a model's config is a few kB; a bigger file is not one). */
const MAX_CONFIG_BYTES = 1_000_000;

export function modelFolderMemory(config: Pick<RunConfig, 'model' | 'stages'>): NonNullable<RunEstimate['memory']> | null {
  if (config.model.source === 'preset' || !config.model.path) return null;
  let raw: unknown;
  try {
    // a regular file of at most MAX_CONFIG_BYTES, checked before reading: a FIFO named config.json froze the serve host (issue 37 N3)
    raw = JSON.parse(readRegularTextSync(join(config.model.path, 'config.json'), { maxBytes: MAX_CONFIG_BYTES, what: 'config.json' }));
  } catch { return null; }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const shape = shapeFromHfConfig(raw as Record<string, unknown>, config.model.path);
  if (!shape) return null;
  const peaks = stagePeaks(shape, planFromConfig(config), CUDA_PATH);
  const peak = runPeak(peaks);
  const round = (x: number) => Math.round(x * 100) / 100;
  const fitsSize = GPU_SIZES.find((size) => fitsCard(peak.bytes, GPU_SIZE_CARD_GIB[size])) ?? null;
  return {
    model: `${shape.hidden} wide, ${shape.layers} layers, vocab ${shape.vocab} (${(parameterCount(shape) / 1e6).toFixed(1)}M parameters)`,
    stages: (Object.entries(peaks) as Array<[StageName, { bytes: number }]>).filter(([, p]) => p.bytes > 0)
      .map(([stage, p]) => ({ stage, title: STAGE_TITLES[stage], gib: round(gib(p.bytes)) })),
    peak: { stage: STAGE_TITLES[peak.stage], gib: round(gib(peak.bytes)), withMarginGib: round(gib(peak.bytes * ENGINE_MEASURED_MARGIN)) },
    cards: CARDS_GIB.map((card) => ({ gib: card, fits: fitsCard(peak.bytes, card) })),
    fitsSize,
  };
}
