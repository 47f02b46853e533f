// Messages between the host (run-host.ts) and the engine process (engine-process.ts). Plain JSON.
// Every host request carries a requestId and is settled exactly once by the host's
// RequestTracker: a reply, an error, the process exiting, or a timeout.
import type { ApiError, RunEvent } from '../api/records.js';
import type { RunConfig } from '../api/run-config.js';

export type HostMessage =
  | { type: 'start'; requestId: number; runId: string; runDir: string; config: RunConfig; stages: string[]; attempt: number }
  | { type: 'stop'; requestId: number }
  | { type: 'ping'; requestId: number }
  | { type: 'shutdown' };

export type RunOutcome = { status: 'completed' | 'stopped' | 'failed'; reason?: string };

export type EngineMessage =
  | { type: 'ready'; pid: number }
  | { type: 'reply'; requestId: number; result: unknown }
  | { type: 'error'; requestId: number; error: ApiError }
  | { type: 'event'; event: RunEvent }
  | { type: 'finished'; outcome: RunOutcome };

export function isEngineMessage(v: unknown): v is EngineMessage {
  return !!v && typeof v === 'object' && typeof (v as { type?: unknown }).type === 'string';
}
