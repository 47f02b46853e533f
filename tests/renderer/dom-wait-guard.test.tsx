// @vitest-environment jsdom
// The jsdom files' findBy*/waitFor hang guard (tests/renderer/setup-dom-wait-guard.ts, vitest.config.ts setupFiles) is
// in force: without it Testing Library gives up after 1 s, which failed a renderer test at load ~20 in a fresh-clone CI.
import { describe, expect, it } from 'vitest';
import { getConfig } from '@testing-library/react';

describe('Testing Library wait guard', () => {
  it('findBy*/waitFor wait up to 60 s before failing', () => {
    expect(getConfig().asyncUtilTimeout).toBe(60_000);
  });
});
