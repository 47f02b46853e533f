// Diagnostic stages: exercise the engine, storage and UI plumbing without training.
// Options come from config.stages[<stage name>]:
//   diag-wait / diag-wait2  { steps = 10, delayMs = 20, warnAt, warning, logEachStep = false, step = "sleep" }   ticks progress,
//                           logs metrics, resumable per step; at step warnAt it logs `warning` at level warn (the Run view's
//                           warnings banner); logEachStep: an info line per step (a long log); step: how a step's delayMs passes:
//                           "sleep" (a Stop cuts it short), "worker" (a Stop waits for it, the event loop free: a torch worker's
//                           training step), "blocking" (a busy loop that blocks the event loop: in-process TF.js training)
//   diag-episodes           { count = 8 }                  writes synthetic episodes (rollouts + index)
//   diag-fail               { message }                    throws
//   diag-crash              { mode = "kill" | "exit" | "oom", code = 3, once = true, afterMs = 0 }
//                           kills its own process (once: only on the first attempt, so resume passes)
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Board, EpisodeRecord } from '../api/records.js';
import type { StageContext, StageDefinition } from '../api/stage.js';

function options(ctx: StageContext): Record<string, unknown> { return ctx.config.stages[ctx.stage] ?? {}; }
function num(o: Record<string, unknown>, key: string, def: number): number {
  const v = o[key];
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`stages.${key}: expected a number, received ${JSON.stringify(v)}`);
  return v;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); resolve(); };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function makeWaitStage(name: string): StageDefinition {
  return {
    name,
    title: 'Diagnostic: wait',
    async run(ctx) {
      const o = options(ctx);
      const steps = num(o, 'steps', 10);
      const delayMs = num(o, 'delayMs', 20);
      const warnAt = num(o, 'warnAt', -1);
      const warning = typeof o.warning === 'string' && o.warning ? o.warning : `${name}: diagnostic warning at step ${warnAt}`;
      const kind = o.step ?? 'sleep';
      if (kind !== 'sleep' && kind !== 'worker' && kind !== 'blocking') {
        throw new Error(`stages.${name}.step: expected "sleep", "worker" or "blocking", received ${JSON.stringify(kind)}`);
      }
      const never = new AbortController().signal;
      const state = ctx.loadState();
      const start = typeof state?.step === 'number' ? state.step : 0;
      if (start > 0) ctx.log('info', `${name}: resuming after step ${start} of ${steps}`);
      for (let step = start + 1; step <= steps; step++) {
        if (kind === 'blocking') {
          const until = Date.now() + delayMs;
          while (Date.now() < until) { /* the event loop is blocked */ }
          await new Promise((r) => setImmediate(r));   // between steps it yields, as TF.js training does (breathe)
        }
        else await sleep(delayMs, kind === 'worker' ? never : ctx.signal);
        if (ctx.signal.aborted && kind === 'sleep') return { stoppedAt: step - 1 };
        ctx.metric(step, { 'diag/value': Math.sin(step / 5), 'diag/step': step }, { episodes: step * 2 });
        ctx.progress(step, steps, `step ${step}/${steps}`);
        if (step === warnAt) ctx.log('warn', warning);
        if (o.logEachStep === true) ctx.log('info', `${name}: step ${step} of ${steps}`);
        ctx.saveState({ step });
        if (ctx.signal.aborted) return { stoppedAt: step };   // a "worker" or "blocking" step ends, and is kept, before the stop
      }
      return { steps, resumedFrom: start };
    },
  };
}

function board(rows: number, cols: number, player: [number, number]): Board {
  const cells = Array.from({ length: rows }, (_, r) =>
    Array.from(
      { length: cols },
      (_, c) =>
        (r === 0 || c === 0 || r === rows - 1 || c === cols - 1
          ? 'wall'
          : r === player[0] && c === player[1]
            ? 'player'
            : 'floor') as Board['cells'][number][number],
    ),
  );
  return { env: 'diagnostic', rows, cols, cells };
}

export const episodesStage: StageDefinition = {
  name: 'diag-episodes',
  title: 'Diagnostic: synthetic episodes',
  async run(ctx) {
    const count = num(options(ctx), 'count', 8);
    const done = (ctx.loadState()?.done as number | undefined) ?? 0;
    for (let i = done; i < count; i++) {
      if (ctx.signal.aborted) return { written: i };
      const seed = ctx.config.seeds.evalStart + i;
      const before = board(5, 5, [1, 1 + (i % 3)]);
      const after = board(5, 5, [2, 1 + (i % 3)]);
      const success = i % 3 === 0;
      const record: EpisodeRecord = {
        id: `diag-${String(i).padStart(4, '0')}`, runId: ctx.runId, stage: ctx.stage, step: Math.floor(i / 4),
        env: 'diagnostic', envConfig: {}, seed, group: Math.floor(i / 4), sample: i % 4, templateHash: 'none',
        success, totalReward: success ? 1 : -0.1 * (i % 5), numTurns: 1, numActions: 1, formatErrors: i % 4 === 1 ? 1 : 0,
        invalidActions: 0, terminated: success, truncated: !success,
        initialState: { text: 'diagnostic state', board: before },
        turns: [{
          turn: 0, prompt: 'Turn 1: move the player', response: '<think><observation>...</observation></think><answer>Down</answer>',
          parsed: {
            observation: '...', reasoning: null, prediction: null, answer: 'Down', actions: ['Down'], unknownActions: [],
            formatError: i % 4 === 1, formatErrors: i % 4 === 1 ? ['missing <prediction>'] : [],
          },
          stateBefore: { text: 'before', board: before }, stateAfter: { text: 'after', board: after },
          observedBoard: before, predictedBoard: null, wm: { observation: null, prediction: null },
          actionsExecuted: ['Down'], reward: success ? 1 : -0.1, flags: { formatError: i % 4 === 1, invalidAction: false, actionIsEffective: true },
          tokens: { prompt: 10, response: 12 }, done: true,
        }],
        time: Date.now(),
      };
      ctx.episode('diag', record);
      ctx.progress(i + 1, count);
      ctx.saveState({ done: i + 1 });
    }
    ctx.writeJson('eval/diagnostic.json', { stage: ctx.stage, step: 0, episodes: count });
    return { written: count };
  },
};

export const failStage: StageDefinition = {
  name: 'diag-fail',
  title: 'Diagnostic: fail',
  async run(ctx) {
    const message = options(ctx).message;
    throw new Error(typeof message === 'string' ? message : 'diagnostic failure (diag-fail stage)');
  },
};

export const crashStage: StageDefinition = {
  name: 'diag-crash',
  title: 'Diagnostic: crash the engine',
  async run(ctx) {
    const o = options(ctx);
    const once = o.once !== false;
    const marker = path.join(ctx.runDir, 'stages', ctx.stage, 'crashed-once');
    if (once && fs.existsSync(marker)) { ctx.log('info', 'diag-crash: crashed on an earlier attempt; passing now'); return { crashed: false }; }
    const afterMs = num(o, 'afterMs', 0);
    if (afterMs > 0) await sleep(afterMs, ctx.signal);
    fs.mkdirSync(path.dirname(marker), { recursive: true });
    fs.writeFileSync(marker, String(Date.now()));
    process.stderr.write('diag-crash: crashing the engine process on purpose\n');
    if (o.mode === 'exit') process.exit(num(o, 'code', 3));
    if (o.mode === 'oom') {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array<number>(1 << 20).fill(hoard.length));   // until V8 hits its heap limit
    }
    process.kill(process.pid, 'SIGKILL');
    await sleep(10_000, ctx.signal);
    return { crashed: true };
  },
};
