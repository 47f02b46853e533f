// `spa-workbench probe`: the world-model probe (core/eval/world-model-probe.ts) from the terminal.
//
//   probe --project DIR --run RUN [--checkpoint NAME] (--seed N | --episode ID [--turn N])
//         [--history FILE] [--action A[,B…]] [--temperature T] [--sample-seed N] [--backend NAME] [--json]
//   probe --project DIR --request - --json      (the request as the API's probe.turn JSON on stdin)
//   probe --project DIR --run RUN [--checkpoint NAME] --check [TURNS] [--base DIR] [--out FILE] [--json]
//                                               (the eval's world-model check on that checkpoint, beside the base)
//
// Reads the project folder directly (no project lock). With --json a failure prints
// `{ "error": { name, message, details } }` on stdout and exits 1; the API's probe.turn runs
// `probe --request=- --json` in a child process and relies on it.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { apiContract, type ProbeResult } from '../api/contract.js';
import { reportCommandError, usageFail as fail } from './action.js';

interface ProbeFlags {
  project: string; run?: string; checkpoint?: string; seed?: string; episode?: string; turn?: string; history?: string;
  action?: string; temperature?: string; sampleSeed?: string; backend?: string; request?: string; json?: boolean;
  check?: string | boolean; base?: string; out?: string;
}

function intFlag(name: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < min) fail(`${name}: expected an integer${min >= 0 ? ` ≥ ${min}` : ''}, ` +
    `received ${JSON.stringify(text)}`);
  return n;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** What a person reads: the model's turn, its state texts against the truth, and the action-given prediction. */
export function describeProbe(r: ProbeResult): string {
  const t = r.turn;
  const score = (s: ProbeResult['turn']['wm']['observation']) =>
    !s ? 'not scored' : !s.parsed ? 'unparseable' : `${s.exact ? 'exact' : `${s.wrongCells.length} wrong cells`}, cells ${pct(s.cellAccuracy)}`;
  const lines = [
    `run ${r.runId} · checkpoint ${r.checkpoint} · ${r.env.id} seed ${r.seed} · turn ${r.turnIndex + 1} (backend ${r.backend}, ${r.wallSeconds.toFixed(2)} s)`,
    '', '── the model\'s turn ──', t.response, '',
    `actions executed: ${t.actionsExecuted.join(', ') || '(none)'} · ` +
      `reward ${t.reward}${t.flags.formatError ? ' · format error' : ''}${r.done ? ' · episode over' : ''}`,
    `observation: ${score(t.wm.observation)}`, `prediction:  ${score(t.wm.prediction)}`,
    '', 'true state:', t.stateBefore.text, '', 'true next state (its actions):', t.stateAfter.text,
  ];
  if (r.actionGiven) {
    const a = r.actionGiven;
    lines.push(
      '',
      `── your action: ${a.actions.join(', ')} ──`,
      `its prediction (${a.score ? score(a.score) : 'not scored'}):`,
      a.prediction ?? '(no <prediction>)',
      '',
      'true next state (your action):',
      a.trueNext.text,
    );
  }
  lines.push('', `legal actions here: ${r.legalActions.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

async function runCheck(flags: ProbeFlags): Promise<void> {
  if (!flags.run) return fail('--check needs --run');
  for (const f of ['seed', 'episode', 'turn', 'history', 'action', 'temperature', 'sampleSeed', 'request'] as const)
    if (flags[f] !== undefined)
      fail(`--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} does not go with --check (it checks the first turns of the eval puzzles)`);
  const turns = flags.check === true ? undefined : intFlag('--check', flags.check as string, 1);
  const { probeCheck } = await import('../eval/world-model-probe.js');
  const r = await probeCheck({
    project: flags.project, runId: flags.run, ...(flags.checkpoint !== undefined ? { checkpoint: flags.checkpoint } : {}),
    ...(turns !== undefined ? { turns } : {}), ...(flags.base !== undefined ? { base: flags.base } : {}),
    ...(flags.backend !== undefined ? { backend: flags.backend } : {}),
  });
  if (flags.out) writeFileSync(flags.out, `${JSON.stringify(r, null, 2)}\n`);
  process.stdout.write(flags.json ? `${JSON.stringify(r, null, 2)}\n`
    : `run ${r.runId} · checkpoint ${r.checkpoint} · base ${r.versusBase.baseCheckpoint} (backend ${r.backend}, ${r.wallSeconds.toFixed(1)} s)\n` +
      `${r.lines.join('\n')}\n`);
}

export function registerProbeCommands(program: Command): void {
  program.command('probe')
    .description('world-model probe: a checkpoint writes its turn on a puzzle (observation and prediction against the truth), and predicts the ' +
      'next state for an action you give')
    .requiredOption('--project <dir>', 'project folder')
    .option('--run <id>', 'run id (its env, template and checkpoints)')
    .option('--checkpoint <name>', 'checkpoint folder under runs/<run>/checkpoints/ (default: the latest policy checkpoint)')
    .option('--seed <n>', 'puzzle seed of the run\'s env')
    .option('--episode <id>', 'a saved episode of the run: its seed, and its responses before --turn as the history')
    .option('--turn <n>', 'with --episode: the turn to probe, from 0 (default 0)')
    .option('--history <file>', 'JSON array of responses already applied (each executes its <answer>), to step on')
    .option('--action <list>', 'your action(s), comma-separated: the model predicts the next state for them')
    .option('--temperature <t>', 'sampling temperature (default 0: greedy)')
    .option('--sample-seed <n>', 'sampling seed (default 0)')
    .option('--backend <name>', 'compute backend: auto, torch, wasm, cpu, tensorflow, tensorflow-gpu (default: the run\'s)')
    .option('--request <file>', 'the whole request as probe.turn JSON ("-" reads standard input); replaces the flags above')
    .option('--check [turns]', 'instead of one turn: the eval\'s world-model check on the first turns of the eval puzzles (default: the run\'s ' +
      'stages.eval.worldModelTurns) beside the run\'s base, with the same seeds: observation exact, prediction exact, and prediction given the action')
    .option('--base <dir>', 'with --check: the model folder to compare with (default: the run\'s checkpoints/bootstrap, or the model it started from)')
    .option('--out <file>', 'with --check: also write the result as JSON to this file')
    .option('--json', 'print JSON (errors too: { "error": { name, message, details } })')
    .action(async (flags: ProbeFlags) => {
      try {
        if (flags.check !== undefined) return await runCheck(flags);
        if (flags.base !== undefined || flags.out !== undefined) fail('--base and --out go with --check');
        let request: z.output<typeof apiContract.probe.turn.request>;
        if (flags.request !== undefined) {
          let json: unknown;
          try {
            json = JSON.parse(readFileSync(flags.request === '-' ? 0 : flags.request, 'utf8'));
          } catch (e) {
            return fail(`--request: not readable JSON (${(e as Error).message})`);
          }
          const parsed = apiContract.probe.turn.request.safeParse(json);
          if (!parsed.success) return fail(`--request: ${parsed.error.issues[0]?.path.join('.') || '(root)'}: ${parsed.error.issues[0]?.message}`);
          request = parsed.data;
        } else {
          if (!flags.run) return fail('--run is required (or give --request)');
          let history: unknown;
          if (flags.history !== undefined) {
            try {
              history = JSON.parse(readFileSync(flags.history === '-' ? 0 : flags.history, 'utf8'));
            } catch (e) {
              return fail(`--history: not readable JSON (${(e as Error).message})`);
            }
            if (!Array.isArray(history) || !history.every((h) => typeof h === 'string')) return fail('--history: expected a JSON array of response strings');
          }
          const temperature = flags.temperature === undefined ? 0 : Number(flags.temperature);
          if (!Number.isFinite(temperature) || temperature < 0 || temperature > 5) return fail(`--temperature: expected a number from 0 to 5, ` +
            `received ${JSON.stringify(flags.temperature)}`);
          const seed = intFlag('--seed', flags.seed, -(2 ** 31));
          const turn = intFlag('--turn', flags.turn, 0);
          const sampleSeed = intFlag('--sample-seed', flags.sampleSeed, -(2 ** 31));
          request = {
            runId: flags.run, turn: turn ?? 0, temperature, sampleSeed: sampleSeed ?? 0, timeoutSeconds: 300,
            ...(flags.checkpoint !== undefined ? { checkpoint: flags.checkpoint } : {}),
            ...(seed !== undefined ? { seed } : {}), ...(flags.episode !== undefined ? { episodeId: flags.episode } : {}),
            ...(history !== undefined ? { history: history as string[] } : {}),
            ...(flags.action !== undefined ? { actions: flags.action.split(',').map((a) => a.trim()).filter(Boolean) } : {}),
          };
        }
        if ((request.seed === undefined) === (request.episodeId === undefined)) fail('give --seed or --episode (one of them)');
        const { probeTurn } = await import('../eval/world-model-probe.js');
        const r = await probeTurn({ project: flags.project, ...request, ...(flags.backend !== undefined ? { backend: flags.backend } : {}) });
        process.stdout.write(flags.json ? `${JSON.stringify(r, null, 2)}\n` : describeProbe(r));
      } catch (err) {
        reportCommandError(err, flags.json, 'probe');
      }
    });
}
