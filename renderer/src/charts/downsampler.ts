// Client side of the downsampling worker: one shared Worker; falls back to the same code on
// the calling thread where Workers are unavailable (tests, odd hosts).
import { prepareSeries, type PrepareRequest, type PrepareResponse } from './downsample.js';

type Waiter = { resolve: (r: PrepareResponse) => void; reject: (e: Error) => void };

export class Downsampler {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();

  constructor(useWorker = typeof Worker !== 'undefined') {
    if (useWorker) {
      try {
        this.worker = new Worker(new URL('./downsample.worker.ts', import.meta.url), { type: 'module' });
        this.worker.onmessage = (ev: MessageEvent<PrepareResponse | { id: number; error: string }>) => {
          const w = this.waiting.get(ev.data.id);
          if (!w) return;
          this.waiting.delete(ev.data.id);
          if ('error' in ev.data) w.reject(new Error(ev.data.error));
          else w.resolve(ev.data);
        };
        this.worker.onerror = (ev) => {
          console.error('downsample worker failed; falling back to the main thread', ev.message);
          this.worker?.terminate();
          this.worker = null;
          for (const w of this.waiting.values()) w.reject(new Error('downsample worker failed'));
          this.waiting.clear();
        };
      } catch {
        this.worker = null;
      }
    }
  }

  get usesWorker(): boolean { return this.worker !== null; }

  prepare(req: Omit<PrepareRequest, 'id'>): Promise<PrepareResponse> {
    const id = this.nextId++;
    if (!this.worker) {
      try { return Promise.resolve(prepareSeries({ ...req, id })); } catch (err) { return Promise.reject(err); }
    }
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker!.postMessage({ ...req, id });
    });
  }

  dispose(): void {
    this.worker?.terminate();
    this.worker = null;
  }
}

let shared: Downsampler | null = null;
/** The app-wide downsampler (one worker for all charts). */
export function sharedDownsampler(): Downsampler {
  shared ??= new Downsampler();
  return shared;
}
