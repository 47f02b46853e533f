// rollouts.*, datasets.*, metrics.*, evals.*: read a run's files (through core/storage/run-data.ts).
import { actionFrames } from '../action-frames.js';
import { defineHandlers, type HostContext } from './context.js';

export function runDataHandlers(ctx: HostContext) {
  return defineHandlers({
    'rollouts.facets': (req) => { const s = ctx.need('rollouts.facets'); ctx.needRun(s, req.runId, 'rollouts.facets'); return ctx.runData(s, req.runId).facets(); },
    'rollouts.get': (req) => { const s = ctx.need('rollouts.get'); ctx.needRun(s, req.runId, 'rollouts.get'); return ctx.runData(s, req.runId).getEpisode(req.id); },
    'rollouts.actionFrames': (req) => {
      const s = ctx.need('rollouts.actionFrames');
      ctx.needRun(s, req.runId, 'rollouts.actionFrames');
      return actionFrames(ctx.runData(s, req.runId).getEpisode(req.id));
    },
    'datasets.query': (req) => { const s = ctx.need('datasets.query'); ctx.needRun(s, req.runId, 'datasets.query'); return ctx.runData(s, req.runId).datasetPage(req.split, req.offset, req.limit); },
    'datasets.stats': (req) => { const s = ctx.need('datasets.stats'); ctx.needRun(s, req.runId, 'datasets.stats'); return { stats: ctx.runData(s, req.runId).datasetStats() }; },
    'metrics.names': (req) => {
      const s = ctx.need('metrics.names');
      const names = new Set<string>(); const stages = new Set<string>();
      for (const id of req.runIds) { ctx.needRun(s, id, 'metrics.names'); const r = ctx.runData(s, id).metricNames(); r.names.forEach((n) => names.add(n)); r.stages.forEach((x) => stages.add(x)); }
      return { names: [...names].sort(), stages: [...stages] };
    },
    'metrics.query': (req) => {
      const s = ctx.need('metrics.query');
      const series = req.runIds.flatMap((id) => { ctx.needRun(s, id, 'metrics.query'); return ctx.runData(s, id).metricSeries(req); });
      return { series };
    },
    'evals.list': (req) => { const s = ctx.need('evals.list'); ctx.needRun(s, req.runId, 'evals.list'); return { results: ctx.runData(s, req.runId).evalResults() }; },
  });
}
