// `spa-workbench env …`: list, describe, render, run, solve and play the environments.
import type { Command } from 'commander';
import { Liquid } from 'liquidjs';
import { readRegularTextSync } from '../util/regular-file.js';
import { createInterface } from 'node:readline';
import { createEnv, describeEnv, getEnvDefinition, listEnvs, solveEnv } from '../envs/index.js';
import type { Env } from '../envs/types.js';
import { assertTemplate, getTemplatePreset, previewPrompt, renderState, type PromptTemplate } from '../prompts/index.js';
import { builtinTemplate, builtinTemplateNames, isBuiltinTemplate } from '../prompts/resolve-template.js';
import { runAction as run, usageFail as fail } from './action.js';

interface EnvFlags { env: string; seed?: string; level?: string; config?: string; template?: string; json?: boolean }

function parseSeed(text: string | undefined): number {
  if (text === undefined) return 0;
  const n = Number(text);
  if (!Number.isInteger(n)) fail(`--seed: expected an integer, received ${JSON.stringify(text)}`);
  return n;
}

function parseConfig(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    fail(`--config: expected a JSON object such as '{"width":8,"height":8,"numBoxes":2}', received ${JSON.stringify(text)} (${(e as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) fail(`--config: expected a JSON object, received ${text}`);
  return value as Record<string, unknown>;
}

function envOptions(flags: EnvFlags): Record<string, unknown> {
  const options = parseConfig(flags.config);
  if (flags.level !== undefined) {
    const def = getEnvDefinition(flags.env);
    if (!def.levelOptions) fail(`--level: env "${def.id}" does not load level files`);
    let text: string;
    try {
      text = readRegularTextSync(flags.level, { maxBytes: 16 * 1024 ** 2, what: 'a level file' });   // a BOM dropped; no FIFO
    } catch (e) {
      fail(`--level: cannot read ${flags.level}: ${(e as Error).message}`);
    }
    Object.assign(options, def.levelOptions(text));
  }
  return options;
}

/** Variables a template part can use (docs/templates.md, "Variables"); loop and assigned names are local. */
const TEMPLATE_VARIABLES = new Set([
  'env', 'actions_text', 'max_turns', 'max_actions_per_turn', 'max_actions_per_game', 'response_format', 'format', 'length_limit',
  'turn', 'state', 'actions_left', 'reward',
  'grid', 'rows', 'cols', 'entities', 'spa_coordinates', 'coordinate_listing', 'relations', 'json', 'random_coordinates',
]);

export function unknownTemplateVariables(template: PromptTemplate): { part: string; name: string }[] {
  const liquid = new Liquid();
  const out: { part: string; name: string }[] = [];
  for (const [part, source] of Object.entries(template.parts)) {
    if (typeof source !== 'string' || !source.includes('{')) continue;
    let names: string[] = [];
    try { names = liquid.globalVariablesSync(source); } catch { continue; }   // parse errors are reported by assertTemplate
    for (const name of names) if (!TEMPLATE_VARIABLES.has(name)) out.push({ part, name });
  }
  return out;
}

function loadTemplate(name: string | undefined): PromptTemplate {
  if (name === undefined) return getTemplatePreset('spa');
  if (isBuiltinTemplate(name)) return builtinTemplate(name);
  let text: string;
  try {
    text = readRegularTextSync(name, { maxBytes: 16 * 1024 ** 2, what: 'a template file' });   // a BOM dropped; no FIFO
  } catch {
    fail(`--template: expected a preset (${builtinTemplateNames().join(', ')}) or a template JSON file, received ${JSON.stringify(name)}`);
  }
  let template: PromptTemplate;
  try {
    template = assertTemplate(text);
  } catch (e) {
    fail(`--template ${name}: ${(e as Error).message}`);
  }
  // Liquid renders an unknown variable as nothing: a typo ({{ gird }}) would silently empty the state.
  for (const u of unknownTemplateVariables(template)) console.error(`warning: --template ${name}: part "${u.part}" uses {{ ${u.name} }}, which is ` +
    `not a template variable (it renders as nothing); known: ${[...TEMPLATE_VARIABLES].join(', ')}`);
  return template;
}

function makeEnv(flags: EnvFlags): { env: Env; seed: number; options: Record<string, unknown> } {
  const options = envOptions(flags);
  const seed = parseSeed(flags.seed);
  try {
    const env = createEnv(flags.env, options);
    env.reset({ seed });
    return { env, seed, options };
  } catch (e) {
    // Errors in a level file name the env option it was loaded into; name the file instead.
    if (flags.level !== undefined && e instanceof Error) {
      const levelKeys = Object.keys(getEnvDefinition(flags.env).levelOptions?.('') ?? {});
      const prefix = new RegExp(`^\\w+ option "(${levelKeys.join('|')})"`);
      if (levelKeys.length && prefix.test(e.message)) fail(e.message.replace(prefix, `--level ${flags.level}`));
    }
    throw e;
  }
}

/**
 * Split an action list: on `||` or `;` when present, else Sudoku on whitespace, text envs (commands with spaces, or admissible
 * commands that change with the state: Python envs such as textworld) on commas, other envs on commas/whitespace.
 */
export function splitActions(envId: string, text: string): string[] {
  if (/\|\||;/.test(text)) return text.split(/\|\||;/).map((s) => s.trim()).filter(Boolean);
  const def = getEnvDefinition(envId);
  if (def.id === 'sudoku') return text.split(/\s+/).filter(Boolean);
  if (def.actions.length === 0 || def.actions.some((a) => /\s/.test(a))) return text.split(',').map((s) => s.trim()).filter(Boolean);
  return text.split(/[,\s]+/).filter(Boolean);
}

function envFlags(cmd: Command, level = true): Command {
  cmd.requiredOption('--env <id>', `environment id (${listEnvs().join(', ')})`)
    .option('--seed <n>', 'seed for the level generator (default 0)')
    .option('--config <json>', 'env options as JSON (names: `env list`), e.g. \'{"width":8,"height":8,"numBoxes":2}\' or \'{"size":8,"isSlippery":false}\'');
  if (level) cmd.option('--level <file>', 'play a level file instead (Sokoban XSB, FrozenLake map rows, Sudoku puzzle text)');
  return cmd;
}

export function registerEnvCommands(program: Command): void {
  const env = program.command('env').description('list, render, run, solve and play the environments');

  env.command('list')
    .description('list the registered environments and their options')
    .option('--json', 'print JSON')
    .action(run((flags: { json?: boolean }) => {
      const all = listEnvs().map((id) => describeEnv(id));
      if (flags.json) { console.log(JSON.stringify(all, null, 2)); return; }
      for (const d of all) {
        console.log(`${d.id} — ${d.title}: ${d.docs.summary}`);
        console.log(`  actions: ${d.actions.length ? d.actions.join(', ') : d.actionPattern}`);
        console.log(`  budget: ${d.budget.maxTurns} turns, ${d.budget.maxActionsPerTurn} actions/turn, ${d.budget.maxActionsPerGame} actions/game; ` +
          `solver: ${d.hasSolver ? 'yes' : 'no'}`);
        for (const o of d.options) console.log(`  --config ${o.name} (${o.type}, default ${JSON.stringify(o.default)}): ${o.doc}`);
      }
      console.log(`templates: ${builtinTemplateNames().join(', ')}`);
    }));

  env.command('describe')
    .description('print an env\'s documentation: actions, observation, rewards, episode end, arguments')
    .requiredOption('--env <id>', 'environment id')
    .action(run((flags: { env: string }) => {
      const d = describeEnv(flags.env);
      console.log(`# ${d.title} (${d.id})\n${d.docs.summary}\n`);
      for (const [k, v] of Object.entries(d.docs)) if (k !== 'summary') console.log(`## ${k}\n${v}\n`);
    }));

  envFlags(env.command('render'))
    .description('render the initial state with a template (default: spa)')
    .option('--template <name|file>', `template preset (${builtinTemplateNames().join(', ')}) or a template JSON file`)
    .option('--prompt', 'print the whole first prompt (system and user messages)')
    .option('--json', 'print JSON: state text, board, grid, entities (and messages with --prompt)')
    .action(run((flags: EnvFlags & { prompt?: boolean }) => {
      const template = loadTemplate(flags.template);
      const { env: e, seed, options } = makeEnv(flags);
      const stateText = renderState(template, e);
      const preview = flags.prompt ? previewPrompt(template, e.id, options, seed) : null;
      if (flags.json) {
        console.log(
          JSON.stringify(
            {
              env: e.id,
              seed,
              options,
              template: template.name,
              stateText,
              grid: e.gridText(),
              board: e.board(),
              entities: e.entities(),
              ...(preview ? { messages: preview.messages } : {}),
            },
            null,
            2,
          ),
        );
      } else if (preview) {
        for (const m of preview.messages) console.log(`--- ${m.role}\n${m.content}`);
        console.log(`--- assistant (generation starts after)\n${preview.generationPrefix}`);
      } else {
        console.log(stateText);
      }
    }));

  envFlags(env.command('run'))
    .description('run a list of actions and print every step (observation, reward, terminated, truncated, info, true state)')
    .requiredOption('--actions <list>', 'actions, e.g. "Up,Up,Left" (Sudoku: "1,1,3 2,4,1" or "1,1,3;2,4,1")')
    .option('--template <name|file>', 'template used for the state text (default: spa)')
    .option('--json', 'print JSON')
    .action(run((flags: EnvFlags & { actions: string }) => {
      const template = loadTemplate(flags.template);
      if (splitActions(flags.env, flags.actions).length === 0) {
        fail(`--actions: expected at least one action, e.g. "Up,Up,Left" (Sudoku: "1,1,3 2,4,1"), received ${JSON.stringify(flags.actions)}`);
      }
      const { env: e, seed } = makeEnv(flags);
      const steps: unknown[] = [];
      const initial = { step: 0, observation: e.gridText(), stateText: renderState(template, e) };
      let total = 0;
      for (const [i, action] of splitActions(e.id, flags.actions).entries()) {
        const r = e.step(action);
        total += r.reward;
        steps.push({
          step: i + 1,
          action,
          observation: r.observation,
          reward: r.reward,
          terminated: r.terminated,
          truncated: r.truncated,
          info: r.info,
          stateText: renderState(template, e),
          state: e.getState(),
        });
        if (!flags.json) {
          const ended = `${r.terminated ? ' terminated' : ''}${r.truncated ? ' truncated' : ''}`;
          console.log(`step ${i + 1}: ${action} → reward ${r.reward}${ended} ${JSON.stringify(r.info)}`);
          console.log(renderState(template, e));
        }
        if (r.terminated || r.truncated) break;
      }
      if (flags.json) console.log(JSON.stringify({ env: e.id, seed, initial, steps, totalReward: Math.round(total * 1e6) / 1e6 }, null, 2));
      else console.log(`total reward ${Math.round(total * 1e6) / 1e6}`);
    }));

  envFlags(env.command('solve'))
    .description('print an optimal plan (Sokoban BFS, Sudoku backtracking, FrozenLake BFS on the non-slippery map)')
    .option('--json', 'print JSON')
    .action(run((flags: EnvFlags) => {
      const { env: e, seed } = makeEnv(flags);
      const solution = solveEnv(e);
      if (!solution) fail(`env "${e.id}" has no solver`);
      if (flags.json) console.log(JSON.stringify({ env: e.id, seed, grid: e.gridText(), ...solution, length: solution.actions.length }, null, 2));
      else {
        console.log(e.gridText());
        console.log(
          solution.solved
            ? `plan (${solution.actions.length} moves${solution.optimal ? ', optimal' : ''}): ${solution.actions.join(e.id === 'sudoku' ? ' ' : ',')}`
            : 'no plan found',
        );
        if (solution.note) console.log(solution.note);
      }
    }));

  envFlags(env.command('play'))
    .description('play in the terminal: type an action per line (r = restart, q = quit); works with piped stdin')
    .option('--template <name|file>', 'template used to show the state (default: raw-grid)')
    .action(run(async (flags: EnvFlags) => {
      const template = flags.template ? loadTemplate(flags.template) : getTemplatePreset('raw-grid');
      const { env: e, seed } = makeEnv(flags);
      const def = describeEnv(e.id);
      console.log(`${def.title} (seed ${seed}). Actions: ${def.actions.length ? def.actions.join(', ') : def.actionPattern}. r = restart, q = quit.`);
      console.log(renderState(template, e));
      const rl = createInterface({ input: process.stdin, terminal: Boolean(process.stdin.isTTY) });
      let total = 0;
      let over = false;
      const prompt = () => { if (process.stdin.isTTY) process.stdout.write('> '); };
      prompt();
      for await (const raw of rl) {
        const line = raw.trim();
        if (line === '') { prompt(); continue; }
        if (line === 'q' || line === 'quit') break;
        if (line === 'r' || line === 'restart') {
          e.reset({ seed }); total = 0; over = false;
          console.log(renderState(template, e)); prompt(); continue;
        }
        if (over) { console.log('the episode is over: r = restart, q = quit'); prompt(); continue; }
        try {
          const r = e.step(line);
          total += r.reward;
          const why = typeof r.info.reason === 'string' ? ` (${r.info.reason})` : '';
          const unknown = r.info.actionIsValid ? '' : `unknown action ${JSON.stringify(line)}; `;
          const noEffect = r.info.actionIsValid && r.info.actionIsEffective === false ? `no effect${why}; ` : '';
          console.log(`${unknown}${noEffect}reward ${r.reward} (total ${Math.round(total * 1e6) / 1e6})`);
          console.log(renderState(template, e));
          if (r.terminated || r.truncated) {
            over = true;
            console.log(r.info.success ? 'Solved!' : r.terminated ? 'Episode over.' : 'Out of steps.');
            console.log('r = restart, q = quit');
          }
        } catch (err) {
          console.log((err as Error).message);
        }
        prompt();
      }
      rl.close();
    }));
}
