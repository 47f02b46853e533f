// (Here, not in tests/setup: its import of @testing-library/react must stay out of the Node tsconfig, whose lib has no DOM.)
// Testing Library's findBy*/waitFor give up after 1 s by default: on CI's 2-core machine at load ~5 a renderer test's
// first fetch of a mocked API can take longer (tests/renderer/trace-replay "a second run side by side" failed at 1.8 s in
// a fresh-clone `.ci/run`, 2026-11-29). Like vitest's testTimeout this is a hang guard, not a speed bound: a test that
// waits for something that never comes still fails, after 60 s. Only where a DOM exists (jsdom test files).
if (typeof document !== 'undefined') {
  const { configure } = await import('@testing-library/react');
  configure({ asyncUtilTimeout: 60_000 });
}
export {};
