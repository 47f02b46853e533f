// Web Worker: smoothing and min/max-keeping downsampling off the UI thread.
import { prepareSeries, type PrepareRequest, type PrepareResponse } from './downsample.js';

const ctx = self as unknown as { onmessage: ((ev: MessageEvent<PrepareRequest>) => void) | null; postMessage(msg: PrepareResponse | { id: number; error: string }): void };

ctx.onmessage = (ev) => {
  try {
    ctx.postMessage(prepareSeries(ev.data));
  } catch (err) {
    ctx.postMessage({ id: ev.data.id, error: err instanceof Error ? err.message : String(err) });
  }
};
