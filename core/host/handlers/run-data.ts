// rollouts.*, datasets.*, metrics.*, evals.*: read a run's files (through core/storage/run-data.ts).
import { actionFrames } from '../action-frames.js';
import { defineHandlers, type HostContext } from './context.js';

export function runDataHandlers(ctx: HostContext) {
  /** The open project's reader of one run, after checking that the run exists. */
  const runData = (where: string, runId: string) => {
    const s = ctx.need(where);
    ctx.needRun(s, runId, where);
    return ctx.runData(s, runId);
  };
  return defineHandlers({
    'rollouts.facets': (req) => runData('rollouts.facets', req.runId).facets(),
    'rollouts.get': (req) => runData('rollouts.get', req.runId).getEpisode(req.id),
    'rollouts.actionFrames': (req) => {
      const episode = runData('rollouts.actionFrames', req.runId).getEpisode(req.id);
      const env = ctx.runInfo(ctx.need('rollouts.actionFrames'), req.runId).config.env;   // the options the run played with
      return actionFrames(episode, env.id === episode.env ? env.options : {});
    },
    'datasets.query': (req) => runData('datasets.query', req.runId).datasetPage(req.split, req.offset, req.limit),
    'datasets.stats': (req) => ({ stats: runData('datasets.stats', req.runId).datasetStats() }),
    'metrics.names': (req) => {
      const s = ctx.need('metrics.names');
      const names = new Set<string>(); const stages = new Set<string>();
      for (const id of req.runIds) {
        ctx.needRun(s, id, 'metrics.names');
        const r = ctx.runData(s, id).metricNames();
        r.names.forEach((n) => names.add(n));
        r.stages.forEach((x) => stages.add(x));
      }
      return { names: [...names].sort(), stages: [...stages] };
    },
    'metrics.query': (req) => {
      const s = ctx.need('metrics.query');
      const series = req.runIds.flatMap((id) => { ctx.needRun(s, id, 'metrics.query'); return ctx.runData(s, id).metricSeries(req); });
      return { series };
    },
    'evals.list': (req) => ({ results: runData('evals.list', req.runId).evalResults() }),
  });
}
