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

export const PING_EVERY_MS = 20;
export const PING_BOUND_MS = 200;       // the host answers within this while an import runs (a correctness property: it never blocks)
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

  stop(): void {
    this.ws?.close();
    if (this.child?.pid && this.child.exitCode === null) this.child.kill('SIGTERM');
  }
}

export interface Pinged { reply: Reply; pings: number; maxPingMs: number; p99PingMs: number; late: number[] }

/** Run `method` while pinging the host every 20 ms (from before the call until after its reply). */
export async function pinged(host: Host, method: string, params: Record<string, unknown>): Promise<Pinged> {
  const latencies: number[] = [];
  const outstanding = new Set<number>();
  const ping = () => {
    const sent = performance.now();
    outstanding.add(sent);
    void host.call('projects.info', {}).then(() => { outstanding.delete(sent); latencies.push(performance.now() - sent); });
  };
  const timer = setInterval(ping, PING_EVERY_MS);
  await new Promise((r) => setTimeout(r, 100));
  const reply = await host.call(method, params);
  await new Promise((r) => setTimeout(r, 100));
  clearInterval(timer);
  const until = performance.now() + 10_000;
  while (outstanding.size > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
  for (const sent of outstanding) latencies.push(performance.now() - sent);   // never answered: as late as it is now
  const sorted = [...latencies].sort((x, y) => x - y);
  return { reply, pings: latencies.length, maxPingMs: Math.max(...latencies), p99PingMs: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
    late: latencies.filter((l) => l > PING_BOUND_MS).map(Math.round) };
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

