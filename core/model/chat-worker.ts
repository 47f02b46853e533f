// The chat-template render worker (issue 37 N1): renders a model folder's Jinja chat template off the calling thread,
// under the worker's heap limit, and answers on the port core/model/chat-bounded.ts gave it, then wakes the caller
// (which waits with Atomics.wait: formatChat stays synchronous). Started by chat-worker-boot.mjs.
import { workerData, type MessagePort } from 'node:worker_threads';
import { renderTemplateText } from './chat.js';

interface Job { id: number; source: string; items: Record<string, unknown>; date: string; maxOutputChars: number }

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };

port.on('message', (job: Job) => {
  let reply: { id: number; ok: true; text: string } | { id: number; ok: false; error: string };
  try {
    const text = renderTemplateText(job.source, job.items, job.date);
    reply = text.length > job.maxOutputChars
      ? { id: job.id, ok: false, error: `it wrote ${text.length} characters, more than the ${job.maxOutputChars} a chat may have (CHAT_TEMPLATE_LIMITS)` }
      : { id: job.id, ok: true, text };
  } catch (err) {
    reply = { id: job.id, ok: false, error: (err as Error).message };
  }
  port.postMessage(reply);
  Atomics.store(flag, 1, job.id);
  Atomics.notify(flag, 1);
});
Atomics.store(flag, 0, 1);   // ready
Atomics.notify(flag, 0);
