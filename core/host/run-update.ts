// runs.update: rename a run, set its tags or notes. Allowed while the run is active: the run
// host's live record is changed too, so its next write of run.json keeps the change.
import type { ApiRequestParsed, RunSummary } from '../api/contract.js';
import { notFound } from '../api/errors.js';
import type { ProjectStore } from '../storage/project-store.js';
import { writeRunRecord, type RunRecord } from '../storage/run-files.js';
import { summaryOf } from '../engine/run-host.js';
import { configParams, type ParamValue } from '../engine/config-params.js';

/** Tags as the user means them: trimmed, de-duplicated, in the order given. */
export function normaliseTags(tags: ReadonlyArray<string>): string[] {
  return [...new Set(tags.map((t) => t.trim()).filter(Boolean))];
}

export async function updateRun(store: ProjectStore, live: RunRecord | undefined, req: ApiRequestParsed<'runs.update'>): Promise<RunSummary> {
  const record = live ?? store.readRun(req.runId);
  if (!record) throw notFound(`run ${JSON.stringify(req.runId)}`, 'runs.update runId', 'its run.json is missing');
  if (req.name !== undefined) record.name = req.name.trim();
  if (req.tags !== undefined) record.tags = normaliseTags(req.tags);
  if (req.notes !== undefined) record.notes = req.notes;
  writeRunRecord(store.runDir(req.runId), record);
  const summary = summaryOf(record);
  store.putRun(summary);
  await store.flush();
  return summary;
}

const paramsCache = new Map<string, Record<string, ParamValue>>();   // run folder → params of runs made before summaries had them

/** Summaries with their config params; runs created before params were recorded get them from run.json (once). */
export function withParams(store: ProjectStore, runs: RunSummary[]): RunSummary[] {
  return runs.map((r) => {
    if (r.params) return r;
    const dir = store.runDir(r.id);
    let params = paramsCache.get(dir);
    if (!params) {
      try { const rec = store.readRun(r.id); params = rec?.config ? configParams(rec.config) : {}; } catch { params = {}; }
      paramsCache.set(dir, params);
    }
    return { ...r, params };
  });
}
