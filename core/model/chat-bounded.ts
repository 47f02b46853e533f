// A model folder's chat template is user code: `{% for i in range(10**9) %}` aborted Node out of memory, two nested
// range(100000) loops never ended, and 10^7 copies of a literal took 80 s and 2.5 GB (issue 37 N1). Here it renders in
// a worker thread with a heap limit, a time limit and an output limit, while the caller waits synchronously
// (Atomics.wait on a shared flag, the reply read with receiveMessageOnPort), so formatChat keeps its synchronous API.
// A render over its time or memory is stopped (the worker is terminated; the next render starts a fresh one) and
// fails with a ChatFormatError naming the limit. Where no worker can start (a build without the sources beside it)
// the template renders inline, still bounded by the template size, range() and output limits.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

/** Bounds of one chat-template render; each is far above what real templates need (a few KB, microseconds). Tests may lower timeoutMs. */
export const CHAT_TEMPLATE_LIMITS: {
  maxTemplateChars: number; maxRangeItems: number; maxOutputChars: number; timeoutMs: number; startMs: number; heapMb: number;
} = {
  maxTemplateChars: 1_000_000,   // real templates are 1-20 KB; a 100 MB one cost 2.8 GB to parse
  maxRangeItems: 1_000_000,      // one range() call; range(10**9) allocated until V8 aborted
  maxOutputChars: 4_000_000,     // the rendered chat (the longest SFT rows are ~100 KB)
  timeoutMs: 10_000,             // one render, once the worker runs (a normal one takes well under a millisecond)
  startMs: 60_000,               // starting the worker (tsx and @huggingface/jinja load once per process)
  heapMb: 256,                   // the worker's old-generation heap
};

interface State { worker: Worker; port: MessagePort; flag: Int32Array; nextId: number }
let state: State | null = null;
let inlineReason: string | null = null;

/** The worker's boot file beside the sources: core/model/ from the sources, ../../core/model/ from dist-cli/chunks/. */
function bootFile(): string | null {
  for (const rel of ['./chat-worker-boot.mjs', '../core/model/chat-worker-boot.mjs', '../../core/model/chat-worker-boot.mjs']) {
    const file = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(file) && existsSync(file.replace(/chat-worker-boot\.mjs$/, 'chat-worker.ts'))) return file;
  }
  return null;
}

function start(): State | null {
  if (inlineReason !== null) return null;
  const file = bootFile();
  if (!file) { inlineReason = 'no chat-worker-boot.mjs beside the sources'; return null; }
  const flag = new Int32Array(new SharedArrayBuffer(8));   // [0]: ready, [1]: id of the last reply
  const { port1, port2 } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(file, {
      workerData: { port: port2, flag }, transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: CHAT_TEMPLATE_LIMITS.heapMb, maxYoungGenerationSizeMb: 32 },
      stdout: false, stderr: false,
    });
  } catch (err) {
    inlineReason = `the worker did not start (${(err as Error).message})`;
    return null;
  }
  worker.unref();
  port1.unref();
  worker.on('error', () => { /* a render over its heap: reported by the caller's timeout */ });
  if (Atomics.wait(flag, 0, 0, CHAT_TEMPLATE_LIMITS.startMs) === 'timed-out' && Atomics.load(flag, 0) === 0) {
    void worker.terminate();
    inlineReason = `the worker did not start within ${CHAT_TEMPLATE_LIMITS.startMs / 1000} s`;
    return null;
  }
  return { worker, port: port1, flag, nextId: 1 };
}

/** Where chat templates render now (tests, diagnostics): 'worker', or 'inline' with the reason. */
export function chatRenderMode(): { mode: 'worker' | 'inline'; reason: string | null } {
  return { mode: inlineReason === null ? 'worker' : 'inline', reason: inlineReason };
}

/** Stops the render worker (tests); the next render starts a new one. */
export function stopChatRenderWorker(): void {
  if (state) void state.worker.terminate();
  state = null;
}

/**
 * Renders `source` with `items` (messages, add_generation_prompt, the tokenizer's special tokens) and the day `date`
 * ('YYYY-MM-DD') in the worker, within CHAT_TEMPLATE_LIMITS; `inline` renders on this thread where no worker runs.
 * Throws Error with a message naming the limit hit (chat.ts wraps it in a ChatFormatError naming the folder's template).
 */
export function renderBounded(source: string, items: Record<string, unknown>, date: string, inline: () => string): string {
  const L = CHAT_TEMPLATE_LIMITS;
  if (source.length > L.maxTemplateChars) {
    throw new Error(`the template is ${source.length} characters, more than the ${L.maxTemplateChars} a chat template may have ` +
      '(CHAT_TEMPLATE_LIMITS; real ones are a few KB)');
  }
  state ??= start();
  if (!state) {
    const text = inline();
    if (text.length > L.maxOutputChars) throw new Error(`it wrote ${text.length} characters, more than the ${L.maxOutputChars} a chat may have`);
    return text;
  }
  const s = state;
  const id = s.nextId++;
  Atomics.store(s.flag, 1, 0);
  s.port.postMessage({ id, source, items, date, maxOutputChars: L.maxOutputChars });
  const deadline = Date.now() + L.timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    Atomics.wait(s.flag, 1, 0, left);
    // one render at a time per worker, and a worker whose render was abandoned is replaced: the reply is this render's
    const reply = receiveMessageOnPort(s.port) as { message: { id: number; ok: boolean; text?: string; error?: string } } | undefined;
    if (reply) {
      if (reply.message.ok) return reply.message.text!;
      throw new Error(reply.message.error);
    }
  }
  stopChatRenderWorker();
  throw new Error(`it did not finish within ${L.timeoutMs / 1000} s or needed more than its ${L.heapMb} MB heap (CHAT_TEMPLATE_LIMITS); ` +
    'the render was stopped');
}
