// Entry of the engine process (Node child_process.fork, or Electron utilityProcess.fork).
// Waits for a `start` message, executes the run's stages, streams events to the host, answers
// `stop` and `ping`, and exits when the run is over or the host goes away.
import { toApiError } from '../api/errors.js';
import type { RunEvent } from '../api/records.js';
import type { EngineMessage, HostMessage, RunOutcome } from './protocol.js';
import { executeRun } from './runner.js';
import { loadStage } from './stages.js';
import { startSystemSampler } from './system-sampler.js';
import { applyNiceToAutogroup } from './autogroup-nice.js';

interface ParentChannel {
  send(message: EngineMessage): void;
  onMessage(listener: (message: HostMessage) => void): void;
  onDisconnect(listener: () => void): void;
}

function parentChannel(): ParentChannel {
  // Electron utilityProcess: process.parentPort (MessagePortMain-like).
  const port = (process as unknown as { parentPort?: { postMessage(m: unknown): void; on(e: 'message', l: (ev: { data: unknown }) => void): void } })
    .parentPort;
  if (port) {
    return {
      send: (m) => port.postMessage(m),
      onMessage: (l) => port.on('message', (ev) => l(ev.data as HostMessage)),
      onDisconnect: () => undefined,   // the utility process is killed with its parent
    };
  }
  if (typeof process.send !== 'function') {
    console.error('engine-process: no parent channel (run it through a ProcessLauncher, not directly)');
    process.exit(2);
  }
  return {
    send: (m) => { if (process.connected) process.send!(m); },
    onMessage: (l) => process.on('message', (m) => l(m as HostMessage)),
    onDisconnect: (l) => process.on('disconnect', l),
  };
}

const channel = parentChannel();
const controller = new AbortController();
let running: Promise<RunOutcome> | null = null;

function finish(outcome: RunOutcome): void {
  channel.send({ type: 'finished', outcome });
  // The host answers with `shutdown`; exit anyway shortly after, so nothing lingers.
  setTimeout(() => process.exit(0), 2000).unref();
}

channel.onDisconnect(() => {
  // The host is gone: stop at the next step boundary, then exit.
  controller.abort();
  if (!running) process.exit(0);
  void running.finally(() => process.exit(0));
});

channel.onMessage((msg) => {
  if (!msg || typeof msg !== 'object') return;
  switch (msg.type) {
    case 'ping':
      channel.send({ type: 'reply', requestId: msg.requestId, result: { pid: process.pid, memory: process.memoryUsage().rss } });
      break;
    case 'stop':
      controller.abort();
      channel.send({ type: 'reply', requestId: msg.requestId, result: { stopping: running !== null } });
      if (!running) finish({ status: 'stopped', reason: 'stopped before it started' });
      break;
    case 'shutdown':
      process.exit(0);
      break;
    case 'start': {
      if (running) {
        channel.send({
          type: 'error',
          requestId: msg.requestId,
          error: { name: 'Conflict', message: 'this engine process is already running a run', details: { where: 'engine start' } },
        });
        break;
      }
      channel.send({ type: 'reply', requestId: msg.requestId, result: { accepted: true, pid: process.pid } });
      let stageNow: string | null = null;   // for the system samples (system.jsonl)
      startSystemSampler(msg.runDir, () => stageNow);
      running = executeRun({
        runId: msg.runId, runDir: msg.runDir, config: msg.config, stages: msg.stages, attempt: msg.attempt,
        signal: controller.signal,
        send: (event: RunEvent) => {
          if (event.type === 'stage' && event.status === 'running') stageNow = event.stage;
          channel.send({ type: 'event', event });
        },
        loadStage,
      }).catch((err): RunOutcome => {
        channel.send({ type: 'event', event: { type: 'log', runId: msg.runId, time: Date.now(), level: 'error', message: toApiError(err).message } });
        return { status: 'failed', reason: (err as Error)?.message ?? String(err) };
      });
      void running.then(finish);
      break;
    }
    default:
      break;
  }
});

// An interrupt is the host's to handle (it sends `stop`, and kills after a second Ctrl-C): under
// Electron, or a Node host whose engine shares the terminal's process group, the terminal's SIGINT
// would otherwise end the engine mid-step and leave the run failed instead of stopped.
process.on('SIGINT', () => undefined);

process.on('uncaughtException', (err) => {
  process.stderr.write(`engine-process: uncaught exception: ${err?.stack ?? String(err)}\n`);
  process.exit(70);
});
process.on('unhandledRejection', (err) => {
  process.stderr.write(`engine-process: unhandled rejection: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(70);
});

// this process's session is its own (detached): its scheduling group takes the nice value the host was started with
applyNiceToAutogroup();

channel.send({ type: 'ready', pid: process.pid });
