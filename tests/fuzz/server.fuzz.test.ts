// Fuzz: hostile HTTP and WebSocket traffic to `serve` on 127.0.0.1 must not crash it, hang it,
// leak a file or drop a request; every refusal carries the CSP. One bounded round in CI.
import { describe, expect, it } from 'vitest';
import { runServerFuzz } from './server-fuzz.js';

describe('server fuzz', () => {
  it('bad cookies, Host, Origin, paths, frames, a 17 MiB message and a burst leave the server up and tight', async () => {
    const r = await runServerFuzz({ seed: 1, rounds: 1 });
    expect(r.failures).toEqual([]);
    expect(r.leaks).toEqual([]);
    expect(r.aliveChecks).toBe(2);
    expect(r.httpRequests).toBeGreaterThan(40);
  }, 180_000);
});
