import { defineConfig } from 'vitest/config';

// Unit and integration tests. End-to-end browser tests live in tests/e2e and run under Playwright.
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'],
    exclude: ['tests/e2e/**', 'node_modules/**'],
    // hang guards, not speed bounds (issue 37 item 7: CI on a 2-core machine at load ~5 stretches a 20 s test past 60 s);
    // a test that needs a bound on its own time says so in bench/, never here
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    // three files at once on the 2-core machine: the tests wait on child processes (engine, CLI, Python), timers and I/O, and
    // with two workers the whole of .ci/run used 0.88 cores on average; three took the unit tier from 909 s to 732 s from a fresh
    // clone at load ~5.5 (bench/results/ci-time.md, issue 37 item 7)
    maxWorkers: 3,
    // TF.js wasm runs on one thread in the tests (and in the CLI/serve children they start): a data-parallel worker
    // thread loads its own TF.js, model and tsx per stage, which tripled a smoke run's CPU time (6 s vs 19 s for three
    // presets, bench/results/ci-time.md) with two test files already on the two cores. The workers' own path is tested
    // with explicit counts (tests/train/wasm-workers-pipeline.test.ts, tests/model/runtime-parallel.test.ts,
    // tests/model/data-parallel.test.ts). SPA_WASM_WORKERS=auto in the environment restores the product default.
    // findBy*/waitFor in jsdom files: a 60 s hang guard instead of Testing Library's 1 s (tests/renderer/setup-dom-wait-guard.ts)
    setupFiles: ['tests/renderer/setup-dom-wait-guard.ts'],
    // PyTorch on one intra-op thread in the tests (models under 10M parameters already are, core/model/torch/runtime.ts): with
    // two vitest files on the two cores, a 135M model's two OpenMP threads wait at every barrier for a descheduled partner
    // (the SmolLM2 smoke run: 250 CPU-s on 2 threads at load 2.5 and 740 s wall in CI at load 4.6; 55 CPU-s on one thread,
    // with its smaller run). SPA_TORCH_THREADS in the environment wins; unset it there for the product default.
    env: {
      SPA_WASM_WORKERS: process.env['SPA_WASM_WORKERS'] ?? '0',
      SPA_TORCH_THREADS: process.env['SPA_TORCH_THREADS'] ?? '1',
      // the Python reference scripts the tests start (transformers, sentence-transformers, numpy): OpenBLAS's pthread build
      // spins a thread per core after each call (a torch loop of 256x256 matmuls: 0.29 CPU-s with it, 0.07 with one thread);
      // the torch worker sets its own from SPA_TORCH_THREADS (resources/torch-worker/worker.py)
      OPENBLAS_NUM_THREADS: process.env['OPENBLAS_NUM_THREADS'] ?? '1',
    },
  },
});
