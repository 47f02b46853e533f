// Training loops are synchronous TF.js work between awaits that resolve as microtasks, so the
// engine's message handlers (stop, host gone) would never run until a stage ends. Stages call
// `breathe()` once per step / generated turn: one macrotask turn lets `stop` set the abort signal
// and a dead host's `disconnect` be seen, so a stop takes effect at the next step boundary.
export function breathe(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
