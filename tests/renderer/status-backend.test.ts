// The status bar names auto's compute backend: torch when the host found it, "checking…" while it
// still probes (never the TF.js fallback behind it, the "backend: wasm during a torch run" defect).
import { describe, expect, it } from 'vitest';
import { statusBackend } from '../../renderer/src/status-backend.js';

const wasm = { name: 'wasm' as const, available: true, detail: '@tensorflow/tfjs-backend-wasm' };
describe('status bar backend', () => {
  it('says torch when torch is available, checking… while it is probed, wasm when torch is not there', () => {
    expect(statusBackend({ backends: [{ name: 'torch', available: true, detail: 'PyTorch 1.13 in /usr/bin/python3; CPU, all cores' }, wasm] })).toBe('torch');
    expect(statusBackend({ backends: [{ name: 'torch', available: false, detail: 'checking for a Python with PyTorch (SPA_PYTHON, python3, /usr/bin/python3)…' }, wasm] })).toBe('checking…');
    expect(statusBackend({ backends: [{ name: 'torch', available: false, detail: 'no Python with torch; install PyTorch' }, wasm] })).toBe('wasm');
    expect(statusBackend({ backends: [] })).toBe('none available');
  });
});
