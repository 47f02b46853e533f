// How the host starts an engine process. Node (serve, CLI): child_process.fork (node-launcher.ts).
// Electron: utilityProcess.fork, implemented in electron/ against this interface. The entry module
// is core/engine/engine-process.ts (it detects Electron's parentPort or Node's IPC channel).
import type { EngineMessage, HostMessage } from './protocol.js';

export interface EngineExit {
  code: number | null;          // exit code, null when killed by a signal
  signal: string | null;        // e.g. "SIGKILL" (OOM killer, kill -9)
  stderrTail: string[];         // last lines the process wrote to stderr (for the failure reason)
}

export interface EngineProcess {
  readonly pid: number | undefined;
  send(message: HostMessage): void;
  onMessage(listener: (message: EngineMessage) => void): void;
  /** Called once, after the process has exited and its output is drained. */
  onExit(listener: (exit: EngineExit) => void): void;
  kill(signal?: NodeJS.Signals): void;
}

export interface LaunchOptions {
  runId: string;
  /** Extra environment variables for the engine process. */
  env?: Record<string, string>;
  /** V8 heap limit of the engine process in MB (an OOM then kills only the engine). */
  maxOldSpaceMb?: number;
}

export interface ProcessLauncher {
  readonly kind: string;          // "node-fork" | "electron-utility"
  launch(options: LaunchOptions): EngineProcess;
}
