// studies.*: a grid of runs (methods × envs × seeds), validated up front, run by the study host.
import type { ApiRequestParsed } from '../../api/contract.js';
import { conflict, describeValue, notFound, WorkbenchError } from '../../api/errors.js';
import { resolveRunConfig } from '../../engine/config.js';
import { listPresets } from '../../engine/presets.js';
import { findStudyRuns, readStudySpec, studyTable, tableCsv, tableMarkdown, type StudySpec } from '../../eval/study.js';
import * as adapter from '../env-adapter.js';
import { defineHandlers, type HostContext, type Session } from './context.js';

/** studies.start: the grid checked against the presets, envs and config schema before anything runs. */
function validateStudy(s: Session, req: ApiRequestParsed<'studies.start'>): StudySpec {
  const where = 'studies.start';
  const bad = (field: string, message: string, expected: string, received: unknown): never => {
    throw new WorkbenchError('ValidationError', `${where}: ${message}`, { where: `${where} ${field}`, expected, received: describeValue(received) });
  };
  let stored: StudySpec | null = null;
  try { stored = readStudySpec(s.store.dir, req.name); } catch (err) {
    throw new WorkbenchError(
      'CorruptData',
      `${where}: study ${req.name} exists but its spec.json does not parse (${(err as Error).message}); fix or remove it, or use another name`,
      { where: `${where} name` },
    );
  }
  const methods = req.methods ?? stored?.methods;
  const envs = req.envs ?? stored?.envs;
  if (!methods || !envs) {
    const missing = [!methods && 'methods', !envs && 'envs'].filter(Boolean).join(' and ');
    bad(
      missing.split(' ')[0]!,
      `study ${JSON.stringify(req.name)} does not exist yet; give ${missing} (and seeds, size) to create it`,
      'methods and envs for a new study',
      undefined,
    );
  }
  const seeds = req.seeds ?? stored?.seeds ?? [0];
  const size = req.size ?? stored?.size ?? 'quick';
  const set = req.set ?? stored?.set;
  const skip = req.skip ?? stored?.skip;
  const presets = listPresets();
  const envIds = adapter.envInfos().map((e) => e.id);
  const checkList = (field: 'methods' | 'envs' | 'seeds', values: ReadonlyArray<string | number>, valid: ReadonlyArray<string> | null, what: string) => {
    values.forEach((v, i) => {
      if (values.indexOf(v) !== i) bad(`${field}[${i}]`, `${field}: ${JSON.stringify(v)} appears more than once`, `distinct ${field}`, v);
      if (valid && !valid.includes(String(v)))
        bad(
          `${field}[${i}]`,
          `unknown ${what} ${JSON.stringify(v)} in ${field}; valid ${field}: ${valid.join(', ')}`,
          `one of ${valid.join(', ')}`,
          v,
        );
    });
  };
  checkList('methods', methods!, presets.map((p) => p.id), 'method preset');
  checkList('envs', envs!, envIds, 'environment');
  checkList('seeds', seeds, null, 'seed');
  const cells = methods!.length * envs!.length * seeds.length;
  if (cells > 10_000) bad('seeds', `the grid has ${cells} runs (methods × envs × seeds); at most 10000`, 'at most 10000 runs', cells);
  if (stored && stored.size !== size) {
    const started = s.store.listRuns().some((r) => r.name.startsWith(`study:${req.name}:`));
    if (started) throw conflict(`${where}: study ${req.name} was run at size ${stored.size}; its runs cannot be mixed with size ${size} in one ` +
      `table. Use another name for a ${size} study`, `${where} size`, { expected: stored.size, received: size });
  }
  // Every cell's config must resolve (catches a bad `set` path or a size a preset lacks) before any run starts.
  for (const method of methods!) for (const env of envs!) {
    const r = resolveRunConfig({ preset: method, size, set: { 'env.id': env, 'seeds.base': seeds[0]!, ...(set ?? {}) } });
    if (!r.ok) {
      const first = r.issues[0]!;
      throw new WorkbenchError('ValidationError', `${where}: the run ${method} × ${env} does not resolve: ${first.path}: ${first.message}`, {
        where: `${where} ${first.path.startsWith('set') || !set ? first.path : `set ${first.path}`}`,
        expected: first.message,
        received: describeValue(set ?? method),
        issues: r.issues,
      });
    }
  }
  const spec: StudySpec = {
    name: req.name,
    methods: [...methods!],
    envs: [...envs!],
    seeds: [...seeds],
    size,
    ...(set && Object.keys(set).length ? { set } : {}),
    ...(skip?.length ? { skip: [...skip] } : {}),
  };
  return spec;
}

export function studyHandlers(ctx: HostContext) {
  return defineHandlers({
    'studies.list': () => ({ studies: ctx.need('studies.list').studies.list() }),
    'studies.start': (req) => {
      const s = ctx.need('studies.start');
      return s.studies.start(validateStudy(s, req));
    },
    'studies.stop': async (req) => ctx.need('studies.stop').studies.stop(req.name),
    'studies.table': (req) => {
      const s = ctx.need('studies.table');
      const spec = readStudySpec(s.store.dir, req.name);
      if (!spec) throw notFound(`study ${JSON.stringify(req.name)}`, 'name', 'see studies.list');
      const table = studyTable(findStudyRuns([s.store.dir], spec.name), spec.methods, spec.envs);
      const references = table.references.map((r) => ({ env: r.env, kind: r.kind, label: r.label, how: r.how, puzzles: r.puzzles, passAt: r.passAt }));
      return {
        name: spec.name,
        methods: spec.methods,
        envs: spec.envs,
        ks: table.ks,
        cells: table.cells,
        references,
        differences: table.differences,
        worldModel: table.worldModel,
        markdown: tableMarkdown(table, spec.methods, spec.envs),
        csv: tableCsv(table),
      };
    },
  });
}
