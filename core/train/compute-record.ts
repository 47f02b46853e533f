// The compute backend and device this process's model runtimes use, recorded when the backend is
// chosen (core/train/runtime.ts chooseCompute) and read by the engine's runner, which sends them to
// the host as the run's provenance (run.json `provenance`). Pure and TF.js-free, so the runner can
// ask without loading a backend.

/** The backend that computes the model and the device it runs on. */
export interface ComputeInUse {
  /** torch | wasm | cpu | tensorflow | tensorflow-gpu */
  backend: string;
  /** e.g. "CUDA NVIDIA H200", "Apple MPS", "CPU (3 threads)" */
  device: string;
}

let inUse: ComputeInUse | null = null;

/** Record the backend chosen for this process (the last choice wins). */
export function recordCompute(choice: ComputeInUse): void { inUse = { ...choice }; }

/** The backend chosen so far in this process; null before any stage chose one (e.g. a diagnostic run). */
export function computeInUse(): ComputeInUse | null { return inUse ? { ...inUse } : null; }
