// Shared by the import fuzz suite (tests/fuzz/import.fuzz.test.ts) and its measurement
// (bench/import-responsiveness.ts): a real host in its own process (tests/fuzz/import-host.ts) driven
// over its WebSocket, a ping probe that times projects.info every 20 ms while a call runs, and
// source generators.
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { stopChild } from '../lib/child-exit.js';

export const PING_EVERY_MS = 20;
export const PING_BOUND_MS = 200;       // the bench counts pings slower than this (a figure of this machine, not asserted in tests)
const repo = fileURLToPath(new URL('../../', import.meta.url));

export type Reply = { ok: true; result: Record<string, unknown> } | { ok: false; error: { name: string; message: string } };

export class Host {
  private child!: ChildProcess;
  private ws!: WebSocket;
  private nextId = 1;
  private readonly pending = new Map<number, (r: Reply) => void>();
  constructor(readonly project: string, private readonly env: Record<string, string> = {}) {}

  async start(): Promise<void> {
    this.child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'tests/fuzz/import-host.ts'), this.project], {
      cwd: repo, env: { ...process.env, SPA_WORKBENCH_HOME: path.join(path.dirname(this.project), 'home'), ...this.env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    this.child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    const wsUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      this.child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { wsUrl: string }).wsUrl);
      });
      this.child.on('exit', (code) => reject(new Error(`import host exited (${code}): ${err.slice(-2000)}`)));
    });
    this.ws = new WebSocket(wsUrl);
    await new Promise<void>((resolve, reject) => { this.ws.once('open', () => resolve()); this.ws.once('error', reject); });
    this.ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { type: string; id: number; result?: Record<string, unknown>; error?: { name: string; message: string } };
      const done = this.pending.get(m.id);
      if (!done) return;
      this.pending.delete(m.id);
      done(m.type === 'result' ? { ok: true, result: m.result! } : { ok: false, error: m.error! });
    });
  }

  call(method: string, params: Record<string, unknown>): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ type: 'call', id, method, params }));
    });
  }

  /** Close the socket and stop the host; resolves once its process has exited (it disposes the project first), so a
   * teardown that removes the project runs after the last write (the ENOTEMPTY of issue 37 item 7). */
  async stop(): Promise<void> {
    this.ws?.close();
    await stopChild(this.child);
  }
}

/**
 * What the ping probe saw around one call. `during`: the pings sent after the call was sent and before its reply came
 * back, and how many of those the host answered before that reply. `callMs`/`maxSilenceMs`: the call's duration and the
 * longest stretch of it without an answer (the tests compare the two; a machine's speed scales both). Latencies (ms,
 * `late`: over PING_BOUND_MS) are the bench's figures (bench/import-responsiveness.ts).
 */
export interface Pinged {
  reply: Reply; pings: number; maxPingMs: number; p99PingMs: number; late: number[];
  during: { sent: number; answeredBeforeReply: number };
  /** The call's duration (sent to reply, ms) and the longest stretch of it in which the host answered no ping (ms). */
  callMs: number; maxSilenceMs: number;
}

/** Wait (without a time bound: the test's timeout is the bound) until `done()` holds, polling every few ms. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

/**
 * Run `method` while pinging the host every 20 ms: from 3 answered pings before the call until 3 answered after its
 * reply (counted in answers, not in time, so a slow machine only makes it longer), then until every ping is answered.
 */
export async function pinged(host: Host, method: string, params: Record<string, unknown>): Promise<Pinged> {
  type Ping = { sent: number; answered: number | null; duringCall: boolean; beforeReply: boolean };
  const pings: Ping[] = [];
  let phase: 'before' | 'call' | 'after' = 'before';
  const ping = () => {
    const p: Ping = { sent: performance.now(), answered: null, duringCall: phase === 'call', beforeReply: false };
    pings.push(p);
    void host.call('projects.info', {}).then(() => { p.answered = performance.now(); p.beforeReply = phase !== 'after'; });
  };
  const answered = () => pings.filter((p) => p.answered !== null).length;
  const timer = setInterval(ping, PING_EVERY_MS);
  let reply: Reply;
  let callSent = 0;
  let replyAt = 0;
  try {
    await until(() => answered() >= 3);
    phase = 'call';
    callSent = performance.now();
    reply = await host.call(method, params);
    replyAt = performance.now();
    phase = 'after';
    const at = answered();
    await until(() => answered() >= at + 3);
  } finally {
    clearInterval(timer);
  }
  await until(() => pings.every((p) => p.answered !== null));
  const latencies = pings.map((p) => p.answered! - p.sent);
  const sorted = [...latencies].sort((x, y) => x - y);
  const during = pings.filter((p) => p.duringCall);
  // answers inside the call's window, with its two ends: the longest gap between them is the longest silence
  const marks = [callSent, ...pings.map((p) => p.answered!).filter((t) => t > callSent && t < replyAt), replyAt].sort((x, y) => x - y);
  const maxSilenceMs = Math.max(...marks.slice(1).map((t, i) => t - marks[i]!));
  return {
    callMs: replyAt - callSent, maxSilenceMs,
    reply, pings: latencies.length, maxPingMs: Math.max(...latencies), p99PingMs: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
    late: latencies.filter((l) => l > PING_BOUND_MS).map(Math.round),
    during: { sent: during.length, answeredBeforeReply: during.filter((p) => p.beforeReply).length },
  };
}

export const RECORDER_LINE = JSON.stringify({
  format: 'spa-workbench.ragen-recorder', version: 1, env_type: 'frozen_lake', tag: 'SimpleFrozenLake', step: 1, env_id: 0, group_id: 0, seed: 3, split: 'val',
  history: [
    { state: 'P_\n_G', actions: ['Right'], reward: 0, llm_raw_response: '<answer>Right</answer>', actions_left: 5 },
    { state: '_P\n_G', actions: ['Down'], reward: 1, llm_raw_response: '<answer>Down</answer>', actions_left: 4 },
    { state: '__\n_√' },
  ],
  metrics: { 'SimpleFrozenLake/success': 1 },
});

/** n verl file-logger lines, written in chunks (no 10^6-line string in memory). */
export function verlMetrics(file: string, n: number): void {
  const fd = fs.openSync(file, 'w');
  for (let i = 0; i < n; i += 10_000) {
    let chunk = '';
    for (let k = i; k < Math.min(n, i + 10_000); k++) chunk += `{"step": ${k}, "data": {"loss": ${(k % 97) / 100}, "reward": ${k % 7}}}\n`;
    fs.writeSync(fd, chunk);
  }
  fs.closeSync(fd);
}

