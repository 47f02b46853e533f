// The registry of run presets (id × size → a RunConfig input) that runs.presets, runs.create and
// studies read: the diagnostic presets defined here, then one entry per method preset of
// core/train/presets.ts (its MethodPreset rows), each offered at every preset size.
import type { Method, RunConfigInput } from '../api/run-config.js';
import type { Size } from '../api/contract.js';
import { PRESET_DEFINITIONS, presetConfig as pipelinePresetConfig } from '../train/presets.js';

/** A registered preset: what the API lists, and how to build its config for one of its sizes. */
export interface PresetDefinition {
  id: string;
  title: string;
  description: string;
  method: Method;
  sizes: Size[];                       // first = default
  config(size: Size): RunConfigInput;  // the config for that size (validated by the caller)
}

const presets = new Map<string, PresetDefinition>();

export function registerPreset(p: PresetDefinition): void {
  if (p.sizes.length === 0) throw new Error(`registerPreset(${p.id}): needs at least one size`);
  presets.set(p.id, p);
}
export function listPresets(): PresetDefinition[] { return [...presets.values()]; }
export function getPreset(id: string): PresetDefinition | undefined { return presets.get(id); }

// ── diagnostic presets (engine tests, smoke checks of a host) ──
registerPreset({
  id: 'diagnostic',
  title: 'Diagnostic: wait',
  description: 'Ticks progress and logs metrics without training; checks that the engine, storage and UI plumbing work.',
  method: 'sft-only',
  sizes: ['smoke', 'quick'],
  config: (size) => ({
    name: 'diagnostic',
    method: 'sft-only',
    size,
    stages: {
      plan: { order: ['diag-wait', 'diag-episodes'] },
      'diag-wait': { steps: size === 'smoke' ? 5 : 50, delayMs: size === 'smoke' ? 10 : 100 },
      'diag-episodes': { count: size === 'smoke' ? 4 : 24 },
    },
  }),
});

// ── the SPA method presets and ablations (core/train/presets.ts) ──
for (const def of PRESET_DEFINITIONS) {
  registerPreset({
    id: def.id, title: def.title, description: def.description, method: def.method,
    sizes: def.sizes ?? ['quick', 'smoke', 'standard', 'paper'],
    config: (size) => pipelinePresetConfig(def.id, size === 'custom' ? 'quick' : size),
  });
}
