// New run: pick a method preset and size, then adjust the config in a form generated from the
// run-config JSON Schema (runs.configSchema); every change is validated by the engine
// (runs.validateConfig) and issues appear at their field. Environment preview: a sampled puzzle
// as a board and as the prompt text the model will see. Model: tiny preset or a local Hugging
// Face folder. The compute backends the host found are shown next to the backend choice.
import { Suspense, lazy, useEffect, useMemo, useRef, useState, type ComponentType, type ReactNode } from 'react';
import type { EnvInfo, PresetInfo, RenderedPuzzle, RunEstimate, Size, SystemInfo, TemplateListItem } from '../../../core/api/contract.js';
import type { Board as BoardData } from '../../../core/api/records.js';
import type { RunConfig } from '../../../core/api/run-config.js';
import { GgufImport, isGgufPath } from '../components/GgufImport.js';
import type { Client } from '../api/client.js';
import { bridge } from '../api/connect.js';
import type { Route } from '../routes.js';
import { ErrorBanner } from '../components/widgets.js';
import { fmtDuration } from '../components/format.js';
import {
  boundsText, getPath, isDefaultValue, isNullable, issuesAt, labelOf, nodeAt, objectFields, parseInput, resolveNode, schemaType, typedStageSections,
  valueKind, type JsonSchema,
} from '../components/schema-form.js';

const boardModules = import.meta.glob<{ default: ComponentType<{ board: BoardData; size?: number; title?: string }> }>('../boards/Board.tsx');
const boardLoader = boardModules['../boards/Board.tsx'];
const Board = boardLoader ? lazy(boardLoader) : null;

export interface NewRunViewProps {
  client: Client;
  navigate: (route: Route) => void;
  preset?: string;
  system: SystemInfo | null;
}

type Issue = { path: string; message: string };
type Validation = { ok: boolean; config: RunConfig | null; stages: string[]; issues: Issue[] };

export default function NewRunView({ client, navigate, preset: routePreset, system }: NewRunViewProps) {
  const [presets, setPresets] = useState<PresetInfo[] | null>(null);
  const [schema, setSchema] = useState<JsonSchema | null>(null);
  const [envs, setEnvs] = useState<EnvInfo[]>([]);
  const [templates, setTemplates] = useState<TemplateListItem[]>([]);
  const [presetId, setPresetId] = useState<string>(routePreset ?? '');
  const [size, setSize] = useState<Size | ''>('');
  const [overrides, setOverrides] = useState<Record<string, unknown>>({});
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const [validation, setValidation] = useState<Validation | null>(null);
  const [lastGood, setLastGood] = useState<RunConfig | null>(null);
  const [preview, setPreview] = useState<RenderedPuzzle | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const [seed, setSeed] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [estimate, setEstimate] = useState<RunEstimate | null>(null);
  const [importNote, setImportNote] = useState<string | null>(null);   // a GGUF file imported into the model folder (GgufImport)
  /** The preset whose default env was already decided (an env with a shipped base replaces one that must train its base). */
  const envDecided = useRef<string | null>(null);

  useEffect(() => {
    Promise.all([client.runs.presets(), client.runs.configSchema(), client.envs.list(), client.templates.list()]).then(([p, s, e, t]) => {
      setPresets(p.presets);
      setSchema(s.schema as JsonSchema);
      setEnvs(e.envs);
      setTemplates(t.templates);
      setPresetId((cur) => cur || (p.presets.find((x) => x.id === 'spa') ?? p.presets[0])?.id || '');
    }, setError);
  }, [client]);

  const preset = presets?.find((p) => p.id === presetId) ?? null;
  // The preset's first size unless a valid size is chosen. The updater reads the latest state: this effect can run after a
  // size the user picked in the same tick (a pending passive effect flushed by the change event), and must not undo it.
  useEffect(() => {
    if (preset && (!size || !preset.sizes.includes(size))) setSize((cur) => (cur && preset.sizes.includes(cur) ? cur : preset.sizes[0] ?? 'quick'));
  }, [preset, size]);

  // Validate (debounced) on every change.
  const seq = useRef(0);
  useEffect(() => {
    if (!presetId || !size) return;
    const id = ++seq.current;
    const t = setTimeout(() => {
      client.runs.validateConfig({ preset: presetId, size, set: overrides }).then((v) => {
        if (id !== seq.current) return;
        setValidation(v);
        if (v.config) setLastGood(v.config);
      }, (e) => { if (id === seq.current) setError(e); });
    }, 200);
    return () => clearTimeout(t);
  }, [client, presetId, size, overrides]);

  const config = validation?.config ?? lastGood;

  // The run's time from the stage times measured (earlier runs here, the bench), and whether a bootstrap base must be trained.
  const estimateSeq = useRef(0);
  useEffect(() => {
    if (!presetId || !size || !validation?.ok) { setEstimate(null); return; }
    const id = ++estimateSeq.current;
    const t = setTimeout(() => {
      client.runs.estimate({ preset: presetId, size, set: overrides }).then((e) => {
        if (id !== estimateSeq.current) return;
        setEstimate(e);
        // the preset's default env trains a base first (e.g. ~1.5 h for Sokoban): start from an env that has a shipped base instead
        if (envDecided.current !== presetId && !('env.id' in overrides)) {
          envDecided.current = presetId;
          const env = validation.config?.env.id;
          if (e.bootstrap === 'train' && e.shippedBaseEnvs.length > 0 && env && !e.shippedBaseEnvs.includes(env)) setValue('env.id', e.shippedBaseEnvs[0]!);
        }
      }, () => { if (id === estimateSeq.current) setEstimate(null); });   // no estimate is not an error of the form
    }, 250);
    return () => clearTimeout(t);
  }, [client, presetId, size, overrides, validation]);
  // Checks the schema cannot express: a model folder is needed unless the model is a preset.
  const extraIssues: Issue[] = validation?.config && validation.config.model.source !== 'preset' && !validation.config.model.path
    ? [{ path: 'model.path', message: `expected the folder of a ${validation.config.model.source === 'hf-folder' ? 'Hugging Face model (config.json, model.safetensors, tokenizer.json)' : 'checkpoint'}, got nothing` }]
    : validation?.config && validation.config.model.source !== 'preset' && isGgufPath(validation.config.model.path)
      ? [{ path: 'model.path', message: 'a .gguf file is not a model folder: import it into one first (below, or `spa-workbench model import FILE --out DIR`)' }]
      : [];
  const issues: Issue[] = [...(validation?.issues ?? []), ...extraIssues];

  // Environment preview.
  const envKey = config ? JSON.stringify([config.env, config.template, seed]) : '';
  useEffect(() => {
    if (!config) return;
    let cancelled = false;
    client.envs.render({ env: config.env, seed, template: config.template }).then((r) => { if (!cancelled) { setPreview(r); setPreviewError(null); } }, (e) => { if (!cancelled) setPreviewError(e); });
    return () => { cancelled = true; };
    // envKey captures config.env / config.template / seed
  }, [client, envKey]);

  const setValue = (path: string, value: unknown) => {
    setOverrides((o) => ({ ...o, [path]: value }));
    setLocalErrors(({ [path]: _drop, ...rest }) => rest);
  };
  const resetValue = (path: string) => {
    setOverrides(({ [path]: _drop, ...rest }) => rest);
    setLocalErrors(({ [path]: _drop, ...rest }) => rest);
  };
  const setLocalError = (path: string, message: string | null) =>
    setLocalErrors((errs) => { const { [path]: _drop, ...rest } = errs; return message ? { ...rest, [path]: message } : rest; });

  const valueAt = (path: string): unknown => (path in overrides ? overrides[path] : getPath(config, path));

  const create = async (start: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const run = await client.runs.create({ preset: presetId, size: size || undefined, set: overrides, start });
      navigate({ view: 'run', runId: run.id });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const hasLocalErrors = Object.keys(localErrors).length > 0;
  const canCreate = !!validation?.ok && extraIssues.length === 0 && !hasLocalErrors && !busy;
  const desktop = bridge();
  const envInfo = envs.find((e) => e.id === config?.env.id);

  const field = (path: string, opts: { label?: string; help?: ReactNode; node?: JsonSchema; choices?: Array<{ value: string; label: string }>; wide?: boolean; placeholder?: string; unsetValue?: unknown } = {}) => {
    if (!schema) return null;
    const node = opts.node ?? nodeAt(schema, path);
    return (
      <Field key={path} path={path} label={opts.label ?? labelOf(path.split('.').pop()!)} node={node} value={valueAt(path)}
        changed={path in overrides} help={opts.help ?? node?.description} choices={opts.choices} wide={opts.wide} placeholder={opts.placeholder} unsetValue={opts.unsetValue}
        errors={[...(localErrors[path] ? [localErrors[path]!] : []), ...issuesAt(issues, path)]}
        onChange={(v) => setValue(path, v)} onReset={() => resetValue(path)} onLocalError={(m) => setLocalError(path, m)} />
    );
  };

  // Stage sections: every typed section with every field from the schema (description, bounds, default), the sections of
  // the run's plan first; other sections (plan order, diagnostic and plug-in stages) typed by their values.
  const typedSections = schema ? typedStageSections(schema) : [];
  const planned = validation?.stages ?? [];
  const stageSections: string[] = config ? [
    ...typedSections.filter((s) => planned.includes(s) || s === 'rollout'),
    ...Object.keys(config.stages).filter((s) => !typedSections.includes(s)),
    ...typedSections.filter((s) => !planned.includes(s) && s !== 'rollout'),
  ] : [];
  const unplacedIssues = issues.filter((i) => !isShownPath(i.path, config));

  return (
    <div data-testid="new-run-view">
      <h1>New run</h1>
      <ErrorBanner error={error} onDismiss={() => setError(null)} />
      {!presets || !schema ? <div className="muted">Loading presets and the config schema…</div> : (
        <div className="newrun">
          <div className="col" style={{ gap: 12 }}>
            <div className="card">
              <h2>Method preset</h2>
              <div className="preset-grid" data-testid="preset-list">
                {/* the engine's plumbing checks (diagnostic*) after the research methods, as in the Studies form */}
                {[...presets.filter((p) => !p.id.startsWith('diagnostic')), ...presets.filter((p) => p.id.startsWith('diagnostic'))].map((p) => (
                  <button key={p.id} className={`preset ${p.id === presetId ? 'active' : ''}`} data-testid={`preset-${p.id}`}
                    onClick={() => { setPresetId(p.id); setOverrides({}); setLocalErrors({}); }}>
                    <strong>{p.title}</strong>
                    <span className="muted" title={p.description}>{p.description}</span>
                    <span className="faint mono">{p.stages.join(' → ')}</span>
                  </button>
                ))}
              </div>
              {preset && (
                <div className="row" style={{ marginTop: 10 }}>
                  <label className="field">
                    <span className="label">Size</span>
                    <select value={size} onChange={(e) => setSize(e.target.value as Size)} data-testid="size-select">
                      {preset.sizes.map((s) => <option key={s} value={s}>{s}</option>)}
                    </select>
                  </label>
                  <div className="grow muted" data-testid="stage-plan">
                    Stages: <span className="mono">{validation?.stages.join(' → ') || '…'}</span>
                  </div>
                </div>
              )}
            </div>

            <div className="card form-card">
              <h2>General</h2>
              <div className="form-grid">
                {field('name', { label: 'run name', help: 'defaults to method + env' })}
                {field('method')}
                {field('backend', { help: <BackendHelp system={system} /> })}
              </div>
            </div>

            <div className="card form-card">
              <h2>Environment</h2>
              <div className="form-grid">
                {field('env.id', { label: 'environment', choices: envs.map((e) => ({ value: e.id, label: e.title })),
                  help: <>{envInfo?.description}{config && estimate?.shippedBaseEnvs.includes(config.env.id)
                    ? <span data-testid="env-shipped-base"> · has a shipped base: the bootstrap copies it instead of training one</span> : null}</> })}
                {config && Object.keys({ ...(envInfo?.defaultOptions ?? {}), ...config.env.options }).map((k) =>
                  field(`env.options.${k}`, { label: labelOf(k), node: inferNode(config.env.options[k] ?? envInfo?.defaultOptions[k]), placeholder: placeholderOf(envInfo?.defaultOptions[k]), unsetValue: envInfo?.defaultOptions[k] }))}
              </div>
            </div>

            <div className="card form-card">
              <h2>Prompt template</h2>
              <div className="form-grid">
                {field('template.preset', { label: 'template', choices: mergeChoice(templates.map((t) => ({ value: t.name, label: `${t.name}${t.kind === 'saved' ? ' (saved)' : ''}` })), config?.template.preset) })}
                {field('template.responseFormat', { label: 'response format' })}
                {field('template.hash', { label: 'pinned version (hash)', help: 'empty = latest version' })}
              </div>
            </div>

            <div className="card form-card">
              <h2>Model</h2>
              <div className="form-grid">
                {field('model.source', { label: 'source', help: 'preset: a tiny model trained from scratch; hf-folder: a local Hugging Face Qwen2 folder' })}
                {config?.model.source === 'preset' || valueAt('model.source') === 'preset'
                  ? field('model.preset', { label: 'size preset' })
                  : (
                    <div className="row" style={{ alignItems: 'flex-end' }} key="model.path">
                      <div className="grow">{field('model.path', { label: 'folder', help: 'contains config.json, model.safetensors, tokenizer.json' })}</div>
                      {desktop && <button className="btn" onClick={async () => { const p = await desktop.dialogs.openFolder({ title: 'Choose a model folder' }); if (p) setValue('model.path', p); }}>Browse…</button>}
                    </div>
                  )}
                {config?.model.source !== 'preset' && isGgufPath(valueAt('model.path')) && (
                  <GgufImport key={String(valueAt('model.path'))} client={client} file={String(valueAt('model.path'))}
                    onImported={(folder, note) => { setImportNote(note); setValue('model.path', folder); }} />
                )}
                {importNote && !isGgufPath(valueAt('model.path')) && <div className="ok" data-testid="gguf-import-done" style={{ gridColumn: '1 / -1' }}>{importNote}</div>}
                {field('model.criticMode', { label: 'critic' })}
                <LoraFields on={'model.lora.rank' in overrides || getPath(config, 'model.lora') != null} field={field}
                  onToggle={(on) => LORA_DEFAULTS.forEach(([k, v]) => (on ? setValue(`model.lora.${k}`, v) : resetValue(`model.lora.${k}`)))} />
              </div>
            </div>

            <div className="card form-card">
              <h2>Seeds</h2>
              <div className="form-grid">
                {['base', 'selfplayStart', 'rlStart', 'evalStart'].map((k) => field(`seeds.${k}`))}
              </div>
            </div>

            {stageSections.length > 0 && <h2 className="section-title" style={{ margin: '4px 0 0' }}>Stage settings</h2>}
            {stageSections.map((stage) => stageCard(stage))}
          </div>

          <div className="col newrun-side" style={{ gap: 12 }}>
            <div className="card">
              <h2>Create</h2>
              {unplacedIssues.length > 0 && (
                <div className="banner error" data-testid="config-issues">
                  {unplacedIssues.map((i) => <div key={i.path + i.message}><span className="mono">{i.path}</span>: {i.message}</div>)}
                </div>
              )}
              {(hasLocalErrors || issues.length > 0) && <div className="field-error" style={{ marginBottom: 8 }} data-testid="form-invalid">Fix the highlighted fields to create the run ({issues.length + Object.keys(localErrors).length} issue(s)).</div>}
              {Object.keys(overrides).length > 0 && <div className="faint" style={{ marginBottom: 8 }}>{Object.keys(overrides).length} field(s) changed from the preset. <a onClick={() => { setOverrides({}); setLocalErrors({}); }}>Reset all</a></div>}
              {estimate && validation?.ok && <RunEstimateNote estimate={estimate} />}
              <div className="row">
                <button className="btn primary" disabled={!canCreate} onClick={() => void create(true)} data-testid="create-start">Create and start</button>
                <button className="btn" disabled={!canCreate} onClick={() => void create(false)} data-testid="create-only">Create</button>
              </div>
            </div>
            {system && (
              <div className="card" data-testid="compute-card">
                <h2>Compute</h2>
                <div className="muted" style={{ marginBottom: 6 }}>
                  backend for this run: <strong>{config?.backend ?? 'auto'}</strong>
                  {config?.backend === 'auto' && <> → {system.backends.find((b) => b.available)?.name ?? 'none available'}</>}
                </div>
                <ul className="list compact">
                  {system.backends.map((b) => (
                    <li key={b.name} className={`backend-item ${b.available ? '' : 'unavailable'}`} data-backend={b.name} data-available={b.available}>
                      <span className={b.available ? 'ok' : 'faint'} aria-label={b.available ? 'available' : 'unavailable'}>{b.available ? '●' : '○'}</span>
                      <span className="mono backend-name">{b.name}</span>
                      <span className="grow muted backend-detail">{b.detail}</span>
                    </li>
                  ))}
                </ul>
              </div>
            )}
            <div className="card" data-testid="env-preview">
              <div className="row" style={{ marginBottom: 8 }}>
                <h2 className="grow" style={{ margin: 0 }}>Preview</h2>
                <label className="row" style={{ gap: 4 }}>seed
                  <input type="number" value={seed} style={{ width: 90 }} onChange={(e) => setSeed(Number.isInteger(Number(e.target.value)) ? Number(e.target.value) : 0)} data-testid="preview-seed" />
                </label>
                <button className="btn small" onClick={() => setSeed((s) => s + 1)}>Next</button>
              </div>
              <ErrorBanner error={previewError} title="Preview" />
              {preview && (
                <>
                  <div className="preview-board">
                    {Board ? <Suspense fallback={null}><Board board={preview.board} size={220} title={`${preview.env} seed ${preview.seed}`} /></Suspense>
                      : <pre className="block">{preview.gridText}</pre>}
                  </div>
                  <div className="faint" style={{ margin: '6px 0' }}>Legal actions: {preview.legalActions.join(', ')}</div>
                  <h3>Prompt the model sees</h3>
                  <pre className="block prompt-text" data-testid="preview-prompt">{preview.messages.map((m) => `[${m.role}]\n${m.content}`).join('\n\n')}</pre>
                </>
              )}
            </div>
          </div>
        </div>
      )}
    </div>
  );

  /** One stage section, collapsed: a typed one lists every field of its schema with its help, bounds and resolved value. */
  function stageCard(stage: string): ReactNode {
    const typed = typedSections.includes(stage);
    const settings = (config?.stages[stage] ?? {}) as Record<string, unknown>;
    const fields = typed && schema ? objectFields(schema, `stages.${stage}`) : [];
    const fromPreset = fields.filter(([k, n]) => settings[k] !== undefined && !isDefaultValue(n, settings[k])).length;
    const changed = Object.keys(overrides).filter((p) => p.startsWith(`stages.${stage}.`)).length;
    const sectionIssues = issues.filter((i) => i.path.startsWith(`stages.${stage}.`)).length;
    const inPlan = planned.includes(stage) || (stage === 'rollout' && planned.length > 0) || !typed;
    const about = typed && schema ? nodeAt(schema, `stages.${stage}`)?.description : undefined;
    return (
      <details className={`card form-card stage-card ${inPlan ? '' : 'not-planned'}`} key={stage} data-testid={`stage-section-${stage}`}
        open={sectionIssues > 0 ? true : undefined}>
        <summary>
          <h2 style={{ display: 'inline' }}>Stage: {stage}</h2>
          <span className="faint" data-testid={`stage-summary-${stage}`}>
            {' '}{typed ? `${fields.length} settings` : `${Object.keys(settings).length} settings`}
            {fromPreset > 0 && ` · ${fromPreset} set by the preset/size`}{changed > 0 && ` · ${changed} changed`}
            {sectionIssues > 0 && ` · ${sectionIssues} issue(s)`}{!inPlan && ' · not in this run\'s plan'}
          </span>
          {about && <div className="muted">{about}</div>}
        </summary>
        <div className="form-grid">
          {typed
            ? fields.map(([k, node]) => stageSchemaField(`stages.${stage}.${k}`, k, node))
            : Object.entries(settings).map(([k, v]) => stageField(`stages.${stage}.${k}`, k, v))}
        </div>
      </details>
    );
  }

  /** A typed stage field: its input from the schema node, help = the field's description, what it accepts and its default. */
  function stageSchemaField(path: string, key: string, node: JsonSchema): ReactNode {
    const value = getPath(config, path);
    const differs = value !== undefined && !isDefaultValue(node, value) && !(path in overrides);
    const { description, ...rest } = node;
    return field(path, {
      label: labelOf(key), node: rest, placeholder: value === undefined ? 'unset (see the help)' : undefined,
      help: <span data-testid={`help-${path}`}>{description}{' '}<span className="faint">({boundsText(node)}{differs ? '; the preset/size sets it' : ''})</span></span>,
    });
  }

  function stageField(path: string, key: string, v: unknown): ReactNode {
    if (valueKind(v) === 'object') {
      return (
        <fieldset key={path} className="subfields">
          <legend>{labelOf(key)}</legend>
          {Object.entries(v as Record<string, unknown>).map(([k2, v2]) => stageField(`${path}.${k2}`, k2, v2))}
        </fieldset>
      );
    }
    return field(path, { label: labelOf(key), node: inferNode(v) });
  }
}

function placeholderOf(v: unknown): string {
  return v === undefined || v === null ? 'env default' : `default: ${typeof v === 'string' ? v : JSON.stringify(v)}`;
}

function mergeChoice(choices: Array<{ value: string; label: string }>, current: string | undefined) {
  return current && !choices.some((c) => c.value === current) ? [{ value: current, label: current }, ...choices] : choices;
}

/** Schema node for a free-form value (stage settings, env options): typed by its current value. */
function inferNode(v: unknown): JsonSchema {
  switch (valueKind(v)) {
    case 'number': return { type: Number.isInteger(v) ? 'number' : 'number' };
    case 'boolean': return { type: 'boolean' };
    case 'string': return { type: 'string' };
    default: return {};
  }
}

function isShownPath(path: string, config: RunConfig | null): boolean {
  if (/^(name|method|backend|env\.id|env\.options\..+|template\.(preset|responseFormat|hash)|model\.(source|preset|path|criticMode|lora\.\w+)|seeds\.\w+)$/.test(path)) return true;
  if (path.startsWith('stages.') && config) return getPath(config, path) !== undefined;
  return false;
}

function BackendHelp({ system }: { system: SystemInfo | null }) {
  if (!system) return null;
  const best = system.backends.find((b) => b.available);
  return (
    <span title={system.backends.map((b) => `${b.name}: ${b.available ? 'available' : 'unavailable'} — ${b.detail}`).join('\n')}>
      auto = {best ? best.name : 'none'}; available: {system.backends.filter((b) => b.available).map((b) => b.name).join(', ') || 'none'}
    </span>
  );
}

interface FieldProps {
  path: string;
  label: string;
  node: JsonSchema | undefined;
  value: unknown;
  changed: boolean;
  help?: ReactNode;
  errors: string[];
  choices?: Array<{ value: string; label: string }> | undefined;
  wide?: boolean | undefined;
  placeholder?: string | undefined;
  /** What an unset value means (an env option's default): a checkbox shows it instead of "off". */
  unsetValue?: unknown;
  onChange: (value: unknown) => void;
  onReset: () => void;
  onLocalError: (message: string | null) => void;
}

const NULL_CHOICE = '\u0000null';   // the <option> value standing for null in a nullable enum

/** One form field; its input kind comes from the schema node (or the value for free-form sections). */
function Field(props: FieldProps) {
  const { path, node, value, errors } = props;
  const type = schemaType(node) ?? (value === undefined ? 'string' : valueKind(value) === 'number' ? 'number' : valueKind(value));
  const invalid = errors.length > 0;
  const id = `f-${path.replace(/[^A-Za-z0-9]/g, '-')}`;
  let input: ReactNode;
  if (props.choices || type === 'enum') {
    const choices = props.choices ?? (node?.enum ?? []).map((e) => ({ value: String(e), label: String(e) }));
    const nullable = isNullable(props.node) || value === null;   // e.g. rl.formatCheck: null = the template's format
    input = (
      <select id={id} value={value === undefined ? '' : value === null ? NULL_CHOICE : String(value)} aria-invalid={invalid} data-path={path}
        onChange={(e) => props.onChange(e.target.value === NULL_CHOICE ? null : e.target.value)}>
        {value === undefined && <option value="">—</option>}
        {nullable && <option value={NULL_CHOICE}>null</option>}
        {choices.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
      </select>
    );
  } else if (type === 'boolean') {
    input = <input id={id} type="checkbox" checked={(value ?? props.unsetValue) === true} data-path={path} onChange={(e) => props.onChange(e.target.checked)} />;
  } else if (type === 'integer' || type === 'number') {
    input = <TextInput id={id} path={path} kind={type} node={node} placeholder={props.placeholder} onClear={props.onReset} value={value} invalid={invalid} onChange={props.onChange} onLocalError={props.onLocalError} />;
  } else if (type === 'string') {
    input = <TextInput id={id} path={path} kind="string" node={node} placeholder={props.placeholder} onClear={props.onReset} value={value} invalid={invalid} onChange={props.onChange} onLocalError={props.onLocalError} />;
  } else {
    input = <TextInput id={id} path={path} kind="json" node={node} placeholder={props.placeholder} onClear={props.onReset} value={value} invalid={invalid} onChange={props.onChange} onLocalError={props.onLocalError} />;
  }
  return (
    <div className={`field ${props.wide ? 'wide' : ''} ${type === 'boolean' ? 'field-bool' : ''}`} data-field={path}>
      <label htmlFor={id} className="field-label">
        <span className="label">{props.label}</span>
        {props.changed && <a className="reset" onClick={props.onReset} title="Back to the preset's value">reset</a>}
      </label>
      {input}
      {errors.map((m) => <span className="field-error" key={m} role="alert" data-testid="field-error">{m}</span>)}
      {props.help && errors.length === 0 && <span className="field-help">{props.help}</span>}
    </div>
  );
}

/** LoRA adapters (model.lora; docs/methods.md): off = full fine-tuning; on = rank, alpha and the PEFT module names. */
const LORA_DEFAULTS: Array<[string, unknown]> = [['rank', 16], ['alpha', 32], ['targetModules', ['q_proj', 'k_proj', 'v_proj', 'o_proj']]];
function LoraFields(props: { on: boolean; onToggle: (on: boolean) => void; field: (path: string, opts?: { label?: string; help?: ReactNode }) => ReactNode }) {
  return (
    <>
      <div className="field field-bool" data-field="model.lora">
        <label htmlFor="f-model-lora" className="field-label"><span className="label">LoRA</span></label>
        <input id="f-model-lora" type="checkbox" checked={props.on} data-testid="lora-toggle" onChange={(e) => props.onToggle(e.target.checked)} />
        <span className="field-help">train low-rank adapters on a frozen base instead of every weight</span>
      </div>
      {props.on && props.field('model.lora.rank', { label: 'LoRA rank' })}
      {props.on && props.field('model.lora.alpha', { label: 'LoRA alpha', help: 'adapter scale = alpha / rank' })}
      {props.on && props.field('model.lora.targetModules', { label: 'target modules', help: 'PEFT module names as JSON, e.g. ["q_proj","v_proj"]' })}
    </>
  );
}

/** Text input that keeps what the user typed and commits only values that parse. */
function TextInput(props: { id: string; path: string; kind: 'integer' | 'number' | 'string' | 'json'; node: JsonSchema | undefined; placeholder?: string | undefined; onClear?: (() => void) | undefined; value: unknown; invalid: boolean; onChange: (v: unknown) => void; onLocalError: (m: string | null) => void }) {
  const shown = props.value === undefined || props.value === null ? '' : props.kind === 'json' ? JSON.stringify(props.value) : String(props.value);
  const [text, setText] = useState(shown);
  const editing = useRef(false);
  useEffect(() => { if (!editing.current) setText(shown); }, [shown]);
  const node = useMemo(() => (props.node ? resolveNode(props.node, props.node) : undefined), [props.node]);
  const commit = (t: string) => {
    if (t.trim() === '' && props.onClear) { props.onLocalError(null); props.onClear(); return; }
    const parsed = parseInput(t, props.kind, node);
    if (parsed.ok) { props.onLocalError(null); props.onChange(parsed.value); } else props.onLocalError(parsed.message);
  };
  return (
    <input id={props.id} type="text" inputMode={props.kind === 'integer' || props.kind === 'number' ? 'decimal' : undefined}
      className={props.kind === 'json' ? 'mono' : ''} value={text} aria-invalid={props.invalid} data-path={props.path} placeholder={props.placeholder}
      onFocus={() => { editing.current = true; }}
      onBlur={() => { editing.current = false; commit(text); }}
      onKeyDown={(e) => { if (e.key === 'Enter') commit(text); }}
      onChange={(e) => { setText(e.target.value); commit(e.target.value); }} />
  );
}

/** The Create card's estimate: total time, per stage with where each number comes from, and the bootstrap warning. */
function RunEstimateNote({ estimate }: { estimate: RunEstimate }) {
  const total = estimateTotalText(estimate);
  return (
    <div style={{ marginBottom: 8 }} data-testid="run-estimate">
      {estimate.warning && <div className="banner warn" data-testid="bootstrap-warning">{estimate.warning}</div>}
      <div className="muted">Estimated time: <strong data-testid="run-estimate-total">{total}</strong></div>
      <details>
        <summary className="faint">per stage</summary>
        <table className="plain mono" data-testid="run-estimate-stages">
          <tbody>
            {estimate.stages.map((st) => (
              <tr key={st.name} title={st.source ?? 'no earlier run of this preset, size, method and env here, and no bench measurement'}>
                <td>{st.name}</td><td>{st.seconds === null ? 'not measured yet' : fmtDuration(st.seconds * 1000)}</td>
                <td className="faint">{st.source ?? 'no earlier run or bench of these settings'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      {estimate.bootstrap === 'shipped' && <div className="faint">The bootstrap uses the shipped base: no base to train.</div>}
      {estimate.memory && <ModelMemoryNote memory={estimate.memory} />}
    </div>
  );
}

/**
 * The whole run's time in words. Measured stages are summed; stages never measured here (no earlier
 * run, no bench) are named "not measured yet", never counted as 0 s: an unmeasured smoke run is not "about 0s".
 */
export function estimateTotalText(estimate: Pick<RunEstimate, 'seconds' | 'stages' | 'unestimated'>): string {
  const missing = estimate.unestimated.length;
  const measured = estimate.stages.filter((s) => s.seconds !== null && !/shipped base|cached base/.test(s.source ?? ''));
  if (estimate.seconds === null || measured.length === 0 || (missing && estimate.seconds < 1)) return missing ? `not measured yet (${estimate.unestimated.join(', ')})` : 'not measured yet';
  return `about ${fmtDuration(estimate.seconds * 1000)}${missing ? ` + ${estimate.unestimated.join(', ')} not measured yet` : ''}`;
}

/** A model folder's memory per stage (the memory model, CUDA) and the cards / GPU size it fits. */
function ModelMemoryNote({ memory }: { memory: NonNullable<RunEstimate['memory']> }) {
  return (
    <div style={{ marginTop: 8 }} data-testid="model-memory">
      <div className="muted">Memory at its peak: <strong>{memory.peak.gib.toFixed(1)} GiB</strong> ({memory.peak.stage}; {memory.peak.withMarginGib.toFixed(1)} GiB with the
        measured margin) · {memory.fitsSize ? <>fits size <strong data-testid="model-memory-fits">{memory.fitsSize}</strong></> : <span className="bad" data-testid="model-memory-fits">fits no GPU size (set model.lora or lower model.memory)</span>}</div>
      <details>
        <summary className="faint">per stage · {memory.model}</summary>
        <table className="plain mono" data-testid="model-memory-stages">
          <tbody>
            {memory.stages.map((st) => <tr key={st.stage}><td>{st.title}</td><td>{st.gib.toFixed(2)} GiB</td></tr>)}
            <tr><td className="faint">cards (95% usable)</td><td className="faint">{memory.cards.map((c) => `${c.gib} GiB ${c.fits ? '✓' : '✗'}`).join(' · ')}</td></tr>
          </tbody>
        </table>
      </details>
    </div>
  );
}
