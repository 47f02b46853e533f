// The renderer's WebSocket transport against a scripted fake socket: calls settle exactly once
// (reply, error with details, connection loss), events reach subscribers (also when they arrive
// before the subscribe reply), topics are shared and re-subscribed after a reconnect.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WireRequest, WireResponse } from '../../core/api/contract.js';
import { createClient } from '../../renderer/src/api/client.js';
import { ApiClientError, describeError } from '../../renderer/src/api/errors.js';
import { WsTransport, type SocketLike } from '../../renderer/src/api/ws-transport.js';
import { wsUrl } from '../../renderer/src/api/connect.js';

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: WireRequest[] = [];
  closedWith: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string) { this.sent.push(JSON.parse(data) as WireRequest); }
  close(code = 1000) { this.closedWith = code; this.readyState = 3; }
  open() { this.readyState = 1; this.onopen?.({}); }
  reply(msg: WireResponse) { this.onmessage?.({ data: JSON.stringify(msg) }); }
  drop(code = 1006, reason = '') { this.readyState = 3; this.onclose?.({ code, reason }); }
}

function setup() {
  const sockets: FakeSocket[] = [];
  const transport = new WsTransport({ url: 'ws://h/api?token=t', createSocket: (u) => { const s = new FakeSocket(u); sockets.push(s); return s; }, backoffMs: { initial: 10, max: 10 } });
  const client = createClient(transport);
  return { sockets, transport, client };
}

afterEach(() => { vi.useRealTimers(); });

describe('WsTransport', () => {
  it('queues calls until open, then resolves a call by its id', async () => {
    const { sockets, client } = setup();
    const p = client.projects.recent();
    expect(sockets[0]!.sent).toHaveLength(0);
    sockets[0]!.open();
    const req = sockets[0]!.sent[0]!;
    expect(req).toMatchObject({ type: 'call', method: 'projects.recent', params: {} });
    sockets[0]!.reply({ type: 'result', id: req.id, result: { projects: [{ path: '/p', name: 'p', openedAt: 1, exists: true }] } });
    await expect(p).resolves.toEqual({ projects: [{ path: '/p', name: 'p', openedAt: 1, exists: true }] });
    client.close();
  });

  it('rethrows host errors with their details (expected / received / where)', async () => {
    const { sockets, client } = setup();
    sockets[0]!.open();
    const p = client.runs.get({ runId: 'nope' });
    const req = sockets[0]!.sent[0]!;
    sockets[0]!.reply({ type: 'error', id: req.id, error: { name: 'NotFound', message: 'run "nope" not found', details: { where: 'runs.get', expected: 'an existing run id', received: '"nope"' } } });
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiClientError);
    expect((err as ApiClientError).name).toBe('NotFound');
    expect((err as ApiClientError).method).toBe('runs.get');
    const text = describeError(err);
    expect(text.title).toBe('NotFound: run "nope" not found');
    expect(text.details).toContain('expected: an existing run id');
    expect(text.details).toContain('received: "nope"');
    client.close();
  });

  it('rejects in-flight calls exactly once when the connection drops, then reconnects and re-subscribes', async () => {
    vi.useFakeTimers();
    const { sockets, client } = setup();
    sockets[0]!.open();
    const events: unknown[] = [];
    const unsub = client.subscribe({ kind: 'run', runId: 'r1' }, (e) => events.push(e));
    const subReq = sockets[0]!.sent.find((m) => m.type === 'subscribe')!;
    sockets[0]!.reply({ type: 'result', id: subReq.id, result: { subscription: 7 } });
    const pending = client.runs.list();
    const settled = vi.fn();
    pending.then(settled, settled);
    sockets[0]!.drop(1006);
    await Promise.resolve();
    await expect(pending).rejects.toMatchObject({ name: 'ConnectionLost' });
    expect(settled).toHaveBeenCalledTimes(1);
    // a late reply on the dead socket changes nothing
    sockets[0]!.reply({ type: 'result', id: sockets[0]!.sent.find((m) => m.type === 'call')!.id, result: { runs: [], total: 0 } });
    expect(settled).toHaveBeenCalledTimes(1);

    await vi.advanceTimersByTimeAsync(20);
    expect(sockets).toHaveLength(2);
    sockets[1]!.open();
    const resub = sockets[1]!.sent.find((m) => m.type === 'subscribe');
    expect(resub).toMatchObject({ type: 'subscribe', topic: { kind: 'run', runId: 'r1' } });
    sockets[1]!.reply({ type: 'result', id: resub!.id, result: { subscription: 1 } });
    const ev = { kind: 'run' as const, runId: 'r1', event: { type: 'log' as const, runId: 'r1', time: 1, level: 'info' as const, message: 'hi' } };
    sockets[1]!.reply({ type: 'event', subscription: 1, event: ev });
    expect(events).toEqual([ev]);
    unsub();
    expect(sockets[1]!.sent.at(-1)).toMatchObject({ type: 'unsubscribe', subscription: 1 });
    client.close();
  });

  it('delivers events that arrive before the subscribe reply, and shares one host subscription per topic', () => {
    const { sockets, client } = setup();
    sockets[0]!.open();
    const a: unknown[] = [];
    const b: unknown[] = [];
    const ua = client.subscribe({ kind: 'project' }, (e) => a.push(e));
    const ub = client.subscribe({ kind: 'project' }, (e) => b.push(e));
    const subs = sockets[0]!.sent.filter((m) => m.type === 'subscribe');
    expect(subs).toHaveLength(1);
    const ev = { kind: 'project' as const, event: { type: 'runs-changed' as const, time: 1, runIds: ['x'] } };
    sockets[0]!.reply({ type: 'event', subscription: 3, event: ev });       // before the reply
    expect(a).toHaveLength(0);
    sockets[0]!.reply({ type: 'result', id: subs[0]!.id, result: { subscription: 3 } });
    expect(a).toEqual([ev]);
    expect(b).toEqual([ev]);
    ua();
    expect(sockets[0]!.sent.filter((m) => m.type === 'unsubscribe')).toHaveLength(0); // b still listens
    ub();
    expect(sockets[0]!.sent.filter((m) => m.type === 'unsubscribe')).toHaveLength(1);
    client.close();
  });

  it('refuses calls after close and reports the state', async () => {
    const { sockets, client, transport } = setup();
    const states: string[] = [];
    transport.onState((s) => states.push(s));
    sockets[0]!.open();
    client.close();
    await expect(client.system.info()).rejects.toMatchObject({ name: 'ClientClosed' });
    expect(states).toEqual(['connecting', 'open', 'closed']);
    expect(sockets[0]!.closedWith).toBe(1000);
  });

  it('builds the socket URL from the page location and token', () => {
    expect(wsUrl({ protocol: 'http:', host: '127.0.0.1:4000' }, 'a b')).toBe('ws://127.0.0.1:4000/api?token=a%20b');
    expect(wsUrl({ protocol: 'https:', host: 'lab:443' }, null)).toBe('wss://lab:443/api');
  });
});
