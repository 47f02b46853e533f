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
    maxWorkers: 2,
  },
});
