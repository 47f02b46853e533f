// Template editor: CodeMirror 6 on the template source (JSON with Liquid parts), a debounced
// live preview on a sampled state of the chosen environment and seed (templates.preview), errors
// with line and column in the editor and as text, immutable versions (templates.save returns a
// content hash), version history with a side-by-side diff, and the state perplexity of the
// editor's text under a chosen checkpoint of a run (templates.perplexity, computed in a child
// process of the host), with the values the run's evaluation recorded as a secondary line.
import { useEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import type { EvalResult, TemplatePerplexity, TemplatePreview, TemplateVersion, TemplateVersionMeta } from '../../../core/api/contract.js';
import type { ViewProps } from '../routes.js';
import CodeEditor from '../editor/CodeEditor.js';
import DiffView from '../editor/DiffView.js';
import { toEditorDiagnostics } from '../editor/template-positions.js';
import BoardFigure from '../boards/BoardFigure.js';
import { ErrorBanner, formatNumber, parseOptionalInt, RunPicker, useAsync } from '../boards/inspect-common.js';
import { fmtDate } from '../components/format.js';

export type TemplatesViewProps = ViewProps & {
  templateName?: string;
  /** Debounce of the live preview after typing (ms). */
  previewDelayMs?: number;
};

const PREVIEW_DELAY_MS = 350;
const EDITOR = '(editor)';

/** Numeric fields of an eval result whose key mentions perplexity, flattened as "a.b.c". */
export function findPerplexities(result: unknown, prefix = ''): Array<{ key: string; value: number }> {
  if (result === null || typeof result !== 'object') return [];
  const out: Array<{ key: string; value: number }> = [];
  for (const [k, v] of Object.entries(result as Record<string, unknown>)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'number' && /perplex|(^|[^a-z])ppl/i.test(key)) out.push({ key, value: v });
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...findPerplexities(v, key));
  }
  return out;
}

/** Environment options typed as JSON: empty means the env's defaults. */
export function parseOptions(text: string): { value: Record<string, unknown>; error: string | null } {
  if (!text.trim()) return { value: {}, error: null };
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { value: {}, error: `environment options: expected a JSON object such as {"size": 9}, got ${Array.isArray(value) ? 'an array' : String(value)}` };
    }
    return { value: value as Record<string, unknown>, error: null };
  } catch (error) {
    return { value: {}, error: `environment options: not valid JSON (${error instanceof Error ? error.message : String(error)}); expected an object such as {"size": 9}` };
  }
}

export default function TemplatesView({ api, projectPath, runId, route, templateName, navigate, previewDelayMs = PREVIEW_DELAY_MS }: TemplatesViewProps): ReactElement {
  const routeName = templateName ?? (route?.view === 'templates' ? route.templateName : undefined);
  const [listVersion, setListVersion] = useState(0);
  const list = useAsync(() => (projectPath ? api.templates.list({}) : null), [api, projectPath, listVersion]);
  const envs = useAsync(() => (projectPath ? api.envs.list({}) : null), [api, projectPath]);
  const templates = list.status === 'ok' ? list.value.templates : [];
  // "Template" on a run opens the run's own template (its pinned template.json) with its hash (issue 12, item 6)
  const fromRun = !!runId && !routeName;
  const runTemplate = useAsync(() => (runId ? api.inspect.runTemplate({ runId }) : null), [api, runId]);
  const runTpl = runTemplate.status === 'ok' ? runTemplate.value : null;
  const name = routeName ?? (fromRun ? runTpl?.name : undefined) ?? (fromRun && runTemplate.status !== 'error' ? undefined : templates[0]?.name);

  const [loadHash, setLoadHash] = useState<string | undefined>(undefined);
  useEffect(() => { setLoadHash(undefined); }, [name]);
  const loaded = useAsync((): Promise<TemplateVersion> | null => {
    if (fromRun && runTpl && !loadHash) {
      return Promise.resolve({ name: runTpl.name, hash: runTpl.hash, source: runTpl.source, createdAt: 0, description: `the template of run ${runTpl.runId}`, parent: null });
    }
    return name ? api.templates.get({ name, ...(loadHash ? { hash: loadHash } : {}) }) : null;
  }, [api, name, loadHash, fromRun, runTpl]);
  const [text, setText] = useState('');
  const [base, setBase] = useState<TemplateVersion | null>(null);
  useEffect(() => {
    if (loaded.status === 'ok') { setText(loaded.value.source); setBase(loaded.value); }
  }, [loaded]);

  // sampled state
  const [envId, setEnvId] = useState<string>('');
  const envList = envs.status === 'ok' ? envs.value.envs : [];
  // the default env unless one is chosen; the updater reads the latest state, so a pick made before this effect ran stays
  useEffect(() => {
    if (!envId && envList[0]) setEnvId((cur) => cur || (envList.some((e) => e.id === 'sokoban') ? 'sokoban' : envList[0]!.id));
  }, [envId, envList]);
  const [seedText, setSeedText] = useState('0');
  const seed = parseOptionalInt(seedText, 'seed');
  const [responseFormat, setResponseFormat] = useState<'world-model' | 'plain'>('world-model');
  const [optionsText, setOptionsText] = useState('');
  useEffect(() => {   // the run's env, as the run played it
    if (!fromRun || !runTpl) return;
    setEnvId(runTpl.env.id);
    setResponseFormat(runTpl.responseFormat);
    setOptionsText(Object.keys(runTpl.env.options).length ? JSON.stringify(runTpl.env.options) : '');
  }, [fromRun, runTpl]);
  const envOptions = useMemo(() => parseOptions(optionsText), [optionsText]);
  const envInfo = envList.find((e) => e.id === envId);

  // debounced live preview of the editor text
  const [preview, setPreview] = useState<{ status: 'idle' | 'loading' | 'ok' | 'error'; value?: TemplatePreview; error?: unknown; forText?: string }>({ status: 'idle' });
  useEffect(() => {
    if (!envId || !text || seed.error || envOptions.error) return;
    let live = true;
    setPreview((p) => ({ ...p, status: 'loading' }));
    const timer = setTimeout(() => {
      api.templates.preview({ source: text, env: { id: envId, options: envOptions.value }, seed: seed.value ?? 0, responseFormat }).then(
        (value) => { if (live) setPreview({ status: 'ok', value, forText: text }); },
        (error: unknown) => { if (live) setPreview({ status: 'error', error, forText: text }); },
      );
    }, previewDelayMs);
    return () => { live = false; clearTimeout(timer); };
  }, [api, text, envId, seed.value, seed.error, responseFormat, envOptions, previewDelayMs]);

  // saving
  const [saveName, setSaveName] = useState('');
  useEffect(() => { setSaveName(name ?? ''); }, [name]);
  const [description, setDescription] = useState('');
  const [saveState, setSaveState] = useState<{ status: 'idle' | 'saving' | 'ok' | 'error'; message?: string; error?: unknown; hash?: string }>({ status: 'idle' });
  const [saveDiagnostics, setSaveDiagnostics] = useState<TemplatePreview['diagnostics']>([]);
  const save = async (): Promise<void> => {
    setSaveState({ status: 'saving' });
    try {
      const result = await api.templates.save({ name: saveName, source: text, description, ...(base?.hash ? { parent: base.hash } : {}) });
      setSaveDiagnostics(result.diagnostics);
      setSaveState({
        status: 'ok', hash: result.version.hash,
        message: result.created ? `Saved new version ${result.version.hash.slice(0, 12)} of ${result.version.name}` : `Identical to existing version ${result.version.hash.slice(0, 12)}: nothing new saved`,
      });
      setBase(result.version);
      setListVersion((v) => v + 1);
      if (result.version.name !== name) navigate({ view: 'templates', templateName: result.version.name, ...(runId ? { runId } : {}) });
    } catch (error) {
      setSaveState({ status: 'error', error });
    }
  };

  const versions = useAsync(() => (name ? api.templates.versions({ name }) : null), [api, name, listVersion]);
  const versionList: TemplateVersionMeta[] = versions.status === 'ok' ? versions.value.versions : [];

  const diagnostics = useMemo(() => {
    const fromPreview = preview.status === 'ok' && preview.forText === text ? preview.value?.diagnostics ?? [] : [];
    // Liquid errors come relative to one part's string: move them to where that part sits in the editor
    return toEditorDiagnostics(text, [...fromPreview, ...saveDiagnostics]);
  }, [preview, text, saveDiagnostics]);
  const dirty = base !== null && text !== base.source;

  if (!projectPath) {
    return <div className="inspect-view"><h1>Template editor</h1><div className="banner info">Open a project first (Projects).</div></div>;
  }

  return (
    <div className="inspect-view templates-view" data-testid="templates-view">
      {fromRun && runTpl && (
        <div className="banner info" data-testid="run-template-banner">
          The template of run <span className="mono">{runTpl.runId}</span>: <b>{runTpl.name}</b>@<span className="mono" title={runTpl.hash}>{runTpl.hash.slice(0, 12)}</span>
          {runTpl.pinned ? ' (pinned in the run folder as template.json)' : ' (resolved from the preset: this run predates pinned templates)'}
          {runTpl.recordedHash && runTpl.recordedHash !== runTpl.hash ? `; the run recorded ${runTpl.recordedHash.slice(0, 12)} at creation: template.json was edited since` : ''}
        </div>
      )}
      {fromRun && runTemplate.status === 'error' && <div className="banner error">The run's template could not be read: {(runTemplate.error as Error)?.message ?? String(runTemplate.error)}</div>}
      <div className="inspect-header">
        <h1>Template editor</h1>
        <label className="field inspect-field">
          <span className="label">Template</span>
          <select aria-label="Template" style={{ maxWidth: 200 }} value={name ?? ''} onChange={(e) => navigate({ view: 'templates', templateName: e.target.value, ...(runId ? { runId } : {}) })}>
            {!name && <option value="">{list.status === 'loading' ? 'loading…' : 'no templates'}</option>}
            {templates.map((t) => <option key={t.name} value={t.name}>{t.name} ({t.kind}{t.versionCount > 0 ? `, ${t.versionCount} version${t.versionCount === 1 ? '' : 's'}` : ''})</option>)}
          </select>
        </label>
        <label className="field inspect-field">
          <span className="label">Environment</span>
          <select aria-label="Environment" value={envId} onChange={(e) => setEnvId(e.target.value)}>
            {envList.map((e) => <option key={e.id} value={e.id}>{e.title || e.id}</option>)}
          </select>
        </label>
        <label className="field inspect-field">
          <span className="label">Options (JSON)</span>
          <input type="text" aria-label="Environment options" style={{ width: 130 }} value={optionsText} onChange={(e) => setOptionsText(e.target.value)}
            placeholder={envInfo ? JSON.stringify(envInfo.defaultOptions) : '{}'} title={`empty = the defaults: ${envInfo ? JSON.stringify(envInfo.defaultOptions) : '{}'}`} aria-invalid={envOptions.error ? 'true' : undefined} />
        </label>
        <label className="field inspect-field narrow">
          <span className="label">Seed</span>
          <span className="row">
            <button type="button" className="btn small" aria-label="Previous seed" onClick={() => setSeedText(String((seed.value ?? 0) - 1))}>‹</button>
            <input type="text" inputMode="numeric" aria-label="Seed" value={seedText} onChange={(e) => setSeedText(e.target.value)} aria-invalid={seed.error ? 'true' : undefined} />
            <button type="button" className="btn small" aria-label="Next seed" onClick={() => setSeedText(String((seed.value ?? 0) + 1))}>›</button>
          </span>
        </label>
        <label className="field inspect-field">
          <span className="label">Response format</span>
          <select aria-label="Response format" value={responseFormat} onChange={(e) => setResponseFormat(e.target.value as 'world-model' | 'plain')}>
            <option value="world-model">world-model</option>
            <option value="plain">plain</option>
          </select>
        </label>
      </div>
      {seed.error && <div className="field-error">{seed.error}</div>}
      {envOptions.error && <div className="field-error">{envOptions.error}</div>}
      {list.status === 'error' && <ErrorBanner error={list.error} context="Templates" />}
      {envs.status === 'error' && <ErrorBanner error={envs.error} context="Environments" />}
      {loaded.status === 'error' && <ErrorBanner error={loaded.error} context={`Template ${name ?? ''}`} />}

      <div className="templates-layout">
        <section className="card col" aria-label="Source">
          <div className="row">
            <h2>Source</h2>
            <span className="template-status mono" data-testid="template-base">
              {base ? `${base.name}@${base.hash.slice(0, 12)}` : ''}{dirty ? ' · modified' : ''}
            </span>
          </div>
          <CodeEditor value={text} onChange={setText} diagnostics={diagnostics} ariaLabel="Template source" testId="template-editor" />
          <DiagnosticList diagnostics={diagnostics} />
          <div className="row">
            <label className="field inspect-field">
              <span className="label">Save as</span>
              <input type="text" aria-label="Save as" value={saveName} onChange={(e) => setSaveName(e.target.value)} placeholder="template-name" />
            </label>
            <label className="field inspect-field grow">
              <span className="label">Description of this version</span>
              <input type="text" aria-label="Version description" value={description} onChange={(e) => setDescription(e.target.value)} placeholder="what changed" />
            </label>
            <button type="button" className="btn primary" onClick={() => { void save(); }} disabled={!text || !saveName || saveState.status === 'saving'}>
              {saveState.status === 'saving' ? 'Saving…' : 'Save new version'}
            </button>
          </div>
          <div className="field-help">Saving never changes an existing version: it creates <span className="mono">templates/&lt;name&gt;@&lt;hash&gt;.json</span>; runs point at the hash.</div>
          {saveState.status === 'ok' && <div className="banner info" role="status" data-testid="save-result">{saveState.message}</div>}
          {saveState.status === 'error' && <ErrorBanner error={saveState.error} context="Save" />}
        </section>

        <section className="card col template-preview" aria-label="Preview">
          <div className="row">
            <h2>Preview</h2>
            <span className="template-status" data-testid="preview-status">
              {preview.status === 'loading' ? 'rendering…' : preview.status === 'ok' ? (preview.value?.ok ? 'up to date' : 'has errors') : preview.status === 'error' ? 'failed' : ''}
            </span>
            {preview.status === 'ok' && preview.value?.hash && <span className="template-status mono">hash {preview.value.hash.slice(0, 12)}</span>}
          </div>
          {preview.status === 'error' && <ErrorBanner error={preview.error} context="Preview" />}
          {preview.value && (
            <>
              {preview.value.board && (
                <BoardFigure board={preview.value.board} title={`${envId} · seed ${seed.value ?? 0}`} size={200} exportName={`${envId}-seed${seed.value ?? 0}`} />
              )}
              <h3>State as the model sees it</h3>
              <pre className="mono" data-testid="preview-state">{preview.value.stateText ?? '(not rendered: see the errors)'}</pre>
              <h3>First user message</h3>
              <pre className="mono" data-testid="preview-prompt">{preview.value.prompt ?? '(not rendered: see the errors)'}</pre>
              {preview.value.messages.length > 0 && (
                <details>
                  <summary>Whole conversation start ({preview.value.messages.length} messages)</summary>
                  {preview.value.messages.map((m, i) => (
                    <div key={i}><div className="faint">{m.role}</div><pre className="mono">{m.content}</pre></div>
                  ))}
                </details>
              )}
            </>
          )}
          <PerplexityPanel api={api} runId={runId} hash={base?.hash ?? null} dirty={dirty} text={text}
            editorHash={preview.status === 'ok' && preview.forText === text ? preview.value?.hash ?? null : null}
            env={envId && !envOptions.error ? { id: envId, options: envOptions.value } : null} />
        </section>
      </div>

      <VersionsPanel name={name} versions={versionList} loading={versions.status === 'loading'} error={versions.status === 'error' ? versions.error : null}
        current={base?.hash} onLoad={(hash) => setLoadHash(hash)} editorText={text}
        fetchSource={async (hash) => (await api.templates.get({ name: name!, hash })).source} />
    </div>
  );
}

function DiagnosticList({ diagnostics }: { diagnostics: TemplatePreview['diagnostics'] }): ReactElement | null {
  if (diagnostics.length === 0) return null;
  return (
    <ul className="template-diagnostics" aria-label="Template errors" data-testid="template-diagnostics">
      {diagnostics.map((d, i) => (
        <li key={i} className={d.severity}>
          {d.line !== null ? `line ${d.line}${d.column !== null ? `, column ${d.column}` : ''}: ` : ''}{d.message}
        </li>
      ))}
    </ul>
  );
}

type LiveState =
  | { status: 'idle' }
  | { status: 'running'; started: number }
  | { status: 'ok'; value: TemplatePerplexity; forText: string; forEnv: string }
  | { status: 'error'; error: unknown };

/** The child process's last stderr lines that templates.perplexity errors carry (details.stderrTail). */
function stderrTail(error: unknown): string[] {
  const tail = (error as { details?: { stderrTail?: unknown } } | null)?.details?.stderrTail;
  return Array.isArray(tail) ? tail.filter((l): l is string => typeof l === 'string') : [];
}

/** Samples typed in the panel: a whole number from 1 to 256. */
export function parseSamples(text: string): { value: number; error: string | null } {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < 1 || Number(t) > 256) return { value: 8, error: `samples: expected a whole number from 1 to 256, got "${t}"` };
  return { value: Number(t), error: null };
}

function PerplexityPanel({ api, runId, hash, dirty, text, env, editorHash }: {
  api: ViewProps['api']; runId?: string; hash: string | null; dirty: boolean; text: string;
  env: { id: string; options: Record<string, unknown> } | null; editorHash: string | null;
}): ReactElement {
  const [run, setRun] = useState<string | undefined>(runId);
  const runTemplate = useAsync(() => (run ? api.inspect.runTemplate({ runId: run }) : null), [api, run]);
  const runTpl = runTemplate.status === 'ok' ? runTemplate.value : null;
  const differs = runTpl !== null && editorHash !== null && editorHash !== runTpl.hash;
  const checkpoints = useAsync(() => (run ? api.templates.checkpoints({ runId: run }) : null), [api, run]);
  const [checkpoint, setCheckpoint] = useState('');                  // '' = the run's latest
  useEffect(() => { setCheckpoint(''); }, [run]);
  const [samplesText, setSamplesText] = useState('8');
  const samples = parseSamples(samplesText);
  const [live, setLive] = useState<LiveState>({ status: 'idle' });
  const request = useRef(0);                                         // a newer request (or a new run/checkpoint) drops older answers
  useEffect(() => { request.current++; setLive({ status: 'idle' }); }, [run, checkpoint]);
  const [now, setNow] = useState(0);
  useEffect(() => {
    if (live.status !== 'running') return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [live.status]);

  const list = checkpoints.status === 'ok' ? checkpoints.value.checkpoints : [];
  const latest = checkpoints.status === 'ok' ? checkpoints.value.latest : null;
  const envKey = env ? `${env.id} ${JSON.stringify(env.options)}` : '';
  const canCompute = !!run && !!env && !!text && !samples.error && live.status !== 'running' && (checkpoint !== '' || latest !== null);

  const compute = async (): Promise<void> => {
    if (!run || !env) return;
    const forText = text;
    const id = ++request.current;
    setLive({ status: 'running', started: Date.now() });
    setNow(Date.now());
    try {
      const value = await api.templates.perplexity({ runId: run, source: forText, env, samples: samples.value, ...(checkpoint ? { checkpoint } : {}) });
      if (id === request.current) setLive({ status: 'ok', value, forText, forEnv: envKey });
    } catch (error) {
      if (id === request.current) setLive({ status: 'error', error });
    }
  };

  return (
    <div className="col" data-testid="perplexity-panel">
      <h3>State perplexity</h3>
      <div className="field-help">
        How surprised a checkpoint is by the true state text written with the editor&apos;s template: exp(mean NLL) of the
        observation and prediction contents of a turn on sampled states (lower is easier for the model). Computed by the
        engine in its own process; unsaved text is fine.
      </div>
      <div className="row">
        <RunPicker api={api} value={run} onChange={setRun} label="Checkpoint of run" allowNone />
        <label className="field inspect-field">
          <span className="label">Checkpoint</span>
          <select aria-label="Checkpoint" value={checkpoint} onChange={(e) => setCheckpoint(e.target.value)} disabled={!run || list.length === 0}>
            <option value="">{checkpoints.status === 'loading' ? 'loading…' : latest ? `latest (${latest})` : run ? 'no checkpoint yet' : '—'}</option>
            {list.map((c) => (
              <option key={c.name} value={c.name}>{c.name}{c.stage ? ` · ${c.stage}` : ''}{c.step !== null ? ` step ${c.step}` : ''}{c.role === 'critic' ? ' (critic)' : ''}</option>
            ))}
          </select>
        </label>
        <label className="field inspect-field narrow">
          <span className="label">Samples</span>
          <input type="text" inputMode="numeric" aria-label="Samples" value={samplesText} onChange={(e) => setSamplesText(e.target.value)} aria-invalid={samples.error ? 'true' : undefined} />
        </label>
        <button type="button" className="btn primary" onClick={() => { void compute(); }} disabled={!canCompute}>
          {live.status === 'running' ? 'Computing…' : 'Compute'}
        </button>
      </div>
      {samples.error && <div className="field-error">{samples.error}</div>}
      {!env && <div className="field-error">Choose an environment with valid options above: the states are sampled from it.</div>}
      {checkpoints.status === 'error' && <ErrorBanner error={checkpoints.error} context="Checkpoints" />}
      {run && checkpoints.status === 'ok' && latest === null && list.length === 0 && (
        <div className="muted">Run {run} has no checkpoint yet: it gets one when a stage (bootstrap, SFT, RL) finishes.</div>
      )}
      {!run && <div className="muted">Pick a run and one of its checkpoints, then Compute.</div>}
      {live.status === 'running' && (
        <div className="muted" role="status" data-testid="live-perplexity-status">
          computing on {samples.value} sampled state{samples.value === 1 ? '' : 's'}… {Math.max(0, Math.round((now - live.started) / 1000))} s
        </div>
      )}
      {live.status === 'error' && <ErrorBanner error={live.error} context="State perplexity" />}
      {live.status === 'error' && stderrTail(live.error).length > 0 && (
        <details data-testid="live-perplexity-stderr">
          <summary className="muted">Output of the perplexity process (last {stderrTail(live.error).length} lines)</summary>
          <pre className="mono">{stderrTail(live.error).join('\n')}</pre>
        </details>
      )}
      {live.status === 'ok' && (
        <div data-testid="live-perplexity">
          <div className="value-tiles">
            <div className="value-tile">
              <div className="value-name">state perplexity</div>
              <div className="value-row"><span className="value-num" data-testid="live-perplexity-value">{formatNumber(live.value.perplexity, 3)}</span></div>
              <div className="value-run faint">{live.value.template.name}@{live.value.template.hash.slice(0, 12)}</div>
            </div>
            <div className="value-tile">
              <div className="value-name">mean NLL (nats / state token)</div>
              <div className="value-row"><span className="value-num">{formatNumber(live.value.meanNll, 4)}</span></div>
              <div className="value-run faint">{live.value.tokens} tokens · {live.value.rows} rows</div>
            </div>
          </div>
          <div className="field-help">
            checkpoint <span className="mono">{live.value.checkpoint.name}</span>
            {live.value.checkpoint.stage ? ` (${live.value.checkpoint.stage}, step ${live.value.checkpoint.step})` : ''} of run {live.value.runId}
            {' · '}{live.value.env.id} seeds {live.value.seedStart}…{live.value.seedStart + live.value.samples - 1}
            {' · '}{live.value.backend} · {formatNumber(live.value.wallSeconds, 2)} s ({formatNumber(live.value.processSeconds, 2)} s with process start)
          </div>
          {(live.forText !== text || live.forEnv !== envKey) && (
            <div className="warn" data-testid="live-perplexity-stale">The editor text or the environment changed since: Compute again for the current text.</div>
          )}
        </div>
      )}
      {differs && (
        <div className="warn" data-testid="perplexity-template-differs">
          The editor's template ({editorHash!.slice(0, 12)}) differs from the template run {run} used ({runTpl!.name}@{runTpl!.hash.slice(0, 12)}): the perplexity scores
          this text under the run's checkpoint, not the run's own template.
        </div>
      )}
      <RecordedPerplexity api={api} run={run} hash={hash} dirty={dirty} />
    </div>
  );
}

/** What the run's evaluation recorded (secondary: those numbers are for the run's own template). */
function RecordedPerplexity({ api, run, hash, dirty }: { api: ViewProps['api']; run?: string; hash: string | null; dirty: boolean }): ReactElement | null {
  const info = useAsync(() => (run ? Promise.all([api.runs.get({ runId: run }), api.evals.list({ runId: run })]) : null), [api, run]);
  if (!run) return null;
  if (info.status === 'loading') return <div className="muted">loading recorded values…</div>;
  if (info.status === 'error') return <ErrorBanner error={info.error} context="Recorded perplexity" />;
  if (info.status !== 'ok') return null;
  const [runInfo, evals] = info.value;
  const found = evals.results.flatMap((r: EvalResult) => findPerplexities(r.result).map((p) => ({ ...p, id: r.id, step: r.step })));
  const sameTemplate = runInfo.templateHash !== null && runInfo.templateHash === hash;
  if (found.length === 0) {
    return <div className="muted" data-testid="perplexity">Unavailable from the run&apos;s evaluation: run {run} has no evaluation with a state perplexity yet.</div>;
  }
  return (
    <details data-testid="perplexity">
      <summary className="muted">Recorded by the run&apos;s evaluation (state perplexity): {found.length} value{found.length === 1 ? '' : 's'}</summary>
      {!sameTemplate && <div className="warn">Run {run} used template {runInfo.templateHash?.slice(0, 12) ?? '(unknown)'}, not this version{dirty ? ' (and the editor has unsaved changes)' : ''}: these numbers are for that template.</div>}
      <table className="dataset-drops">
        <tbody>{found.map((p) => <tr key={`${p.id}-${p.key}`}><td className="mono">{p.id}{p.step !== null ? ` @${p.step}` : ''}</td><td className="mono">{p.key}</td><td className="num">{formatNumber(p.value, 3)}</td></tr>)}</tbody>
      </table>
    </details>
  );
}

function VersionsPanel({ name, versions, loading, error, current, onLoad, editorText, fetchSource }: {
  name: string | undefined; versions: TemplateVersionMeta[]; loading: boolean; error: unknown; current?: string;
  onLoad: (hash: string) => void; editorText: string; fetchSource: (hash: string) => Promise<string>;
}): ReactElement {
  const [a, setA] = useState<string>('');
  const [b, setB] = useState<string>(EDITOR);
  useEffect(() => { setA(versions[1]?.hash ?? versions[0]?.hash ?? ''); setB(versions.length > 1 ? versions[0]!.hash : EDITOR); }, [versions]);
  const sources = useAsync(async () => {
    if (!a || !b) return null;
    const get = (h: string): Promise<string> => (h === EDITOR ? Promise.resolve(editorText) : fetchSource(h));
    return { a: await get(a), b: await get(b) };
  }, [a, b, a === EDITOR || b === EDITOR ? editorText : '']);
  const label = (h: string): string => (h === EDITOR ? 'editor (unsaved text)' : `${name}@${h.slice(0, 12)}`);
  return (
    <section className="card col" aria-label="Versions">
      <h2>Version history{name ? ` of ${name}` : ''}</h2>
      {error !== null && <ErrorBanner error={error} context="Versions" />}
      {loading && <div className="muted">loading…</div>}
      {!loading && versions.length === 0 && <div className="muted">No saved versions yet: this is a preset. Saving creates the first version.</div>}
      {versions.length > 0 && (
        <table className="dt-table template-versions">
          <thead><tr><th className="tv-hash">hash</th><th className="tv-date">created</th><th>description</th><th className="tv-hash">parent</th><th className="tv-radio">diff A</th><th className="tv-radio">diff B</th><th className="tv-load" /></tr></thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.hash} className={v.hash === current ? 'selected' : undefined} data-version={v.hash}>
                <td className="mono">{v.hash.slice(0, 12)}</td>
                <td>{v.createdAt > 0 ? fmtDate(v.createdAt) : <span className="faint">built in</span>}</td>
                <td>{v.description || <span className="faint">—</span>}</td>
                <td className="mono">{v.parent ? v.parent.slice(0, 12) : '—'}</td>
                <td className="tv-radio"><input type="radio" name="diff-a" aria-label={`Diff A ${v.hash.slice(0, 12)}`} checked={a === v.hash} onChange={() => setA(v.hash)} /></td>
                <td className="tv-radio"><input type="radio" name="diff-b" aria-label={`Diff B ${v.hash.slice(0, 12)}`} checked={b === v.hash} onChange={() => setB(v.hash)} /></td>
                <td><button type="button" className="btn small" onClick={() => onLoad(v.hash)} disabled={v.hash === current}>Load</button></td>
              </tr>
            ))}
            <tr>
              <td colSpan={4} className="muted">editor (unsaved text)</td>
              <td />
              <td className="tv-radio"><input type="radio" name="diff-b" aria-label="Diff B editor" checked={b === EDITOR} onChange={() => setB(EDITOR)} /></td>
              <td />
            </tr>
          </tbody>
        </table>
      )}
      {sources.status === 'error' && <ErrorBanner error={sources.error} context="Diff" />}
      {sources.status === 'ok' && sources.value && versions.length > 0 && (
        <DiffView a={sources.value.a} b={sources.value.b} aLabel={label(a)} bLabel={label(b)} />
      )}
    </section>
  );
}
