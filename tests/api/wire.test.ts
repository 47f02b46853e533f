// The shared client half of the wire protocol (core/api/wire.ts): requests settle exactly once,
// and events that overtake their subscribe reply are queued and replayed in order.
import { describe, expect, it, vi } from 'vitest';
import { EARLY_EVENT_LIMIT, PendingRequests, SubscriptionTable } from '../../core/api/wire.js';
import type { WorkbenchEvent } from '../../core/api/contract.js';

const ev = (message: string): WorkbenchEvent => ({ kind: 'run', runId: 'r', event: { type: 'log', runId: 'r', time: 0, level: 'info', message } });

describe('SubscriptionTable', () => {
  it('queues events that arrive before the subscribe reply and replays them, in order, on attach', () => {
    const t = new SubscriptionTable();
    const done = t.subscribing();
    t.deliver(7, ev('a'));
    t.deliver(7, ev('b'));
    const seen: string[] = [];
    t.attach(7, (e) => seen.push((e as { event: { message: string } }).event.message));
    done();
    t.deliver(7, ev('c'));
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('drops events of unknown subscriptions when no subscribe is in flight, and bounds the queue', () => {
    const t = new SubscriptionTable();
    t.deliver(1, ev('stale'));
    const done = t.subscribing();
    for (let i = 0; i < EARLY_EVENT_LIMIT + 5; i++) t.deliver(2, ev(String(i)));
    const seen: WorkbenchEvent[] = [];
    t.attach(2, (e) => seen.push(e));
    t.attach(1, (e) => seen.push(e));
    done();
    expect(seen).toHaveLength(EARLY_EVENT_LIMIT);
    t.detach(2);
    t.deliver(2, ev('after detach'));
    expect(seen).toHaveLength(EARLY_EVENT_LIMIT);
  });
});

describe('PendingRequests', () => {
  it('settles each request once: reply, error, timeout or rejectAll; late replies are ignored', async () => {
    vi.useFakeTimers();
    try {
      const p = new PendingRequests<string>();
      const a = p.add('runs.list');
      const b = p.add('runs.get');
      const c = p.add('runs.start', 50, (m) => new Error(`${m} timed out`));
      const d = p.add('runs.stop');
      expect(new Set([a.id, b.id, c.id, d.id]).size).toBe(4);
      expect(p.resolve(a.id, 1)).toBe(true);
      expect(p.resolve(a.id, 2)).toBe(false);
      expect(p.reject(b.id, new Error('no'))).toBe(true);
      vi.advanceTimersByTime(60);
      expect(p.resolve(c.id, 3)).toBe(false);
      p.rejectAll((m) => new Error(`closed before ${m}`));
      expect(p.size).toBe(0);
      await expect(a.reply).resolves.toBe(1);
      await expect(b.reply).rejects.toThrow('no');
      await expect(c.reply).rejects.toThrow('runs.start timed out');
      await expect(d.reply).rejects.toThrow('closed before runs.stop');
    } finally {
      vi.useRealTimers();
    }
  });
});
