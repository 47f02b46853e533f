// @vitest-environment jsdom
// Issue 36: the New Run form is built from the run spec. For `spa` at size smoke it offers every RL field (every key of
// RlSectionSchema) with its help text from the schema, grouped by stage and collapsed by default, each showing the value the
// preset and size resolve to. The engine side is real: runs.configSchema is the JSON Schema the host serves, and
// runs.validateConfig / runs.presets come from core/engine (no mock of the values).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { z } from 'zod';
import NewRunView from '../../renderer/src/views/NewRunView.js';
import { RlSectionSchema, RunConfigSchema, StageSectionSchemas } from '../../core/api/run-config.js';
import { resolveRunConfig } from '../../core/engine/config.js';
import { listPresets } from '../../core/engine/presets.js';
import { getEnvDefinition } from '../../core/envs/index.js';

afterEach(cleanup);

function mockClient() {
  const client = {
    runs: {
      presets: vi.fn(async () => ({ presets: listPresets().map((p) => ({ id: p.id, title: p.title, description: p.description, method: p.method,
        sizes: p.sizes, stages: resolveRunConfig({ preset: p.id }).stages, config: p.config(p.sizes[0]!) })) })),
      configSchema: vi.fn(async () => ({ schema: z.toJSONSchema(RunConfigSchema, { io: 'input', unrepresentable: 'any' }), defaults: RunConfigSchema.parse({}) })),
      validateConfig: vi.fn(async (req: Parameters<typeof resolveRunConfig>[0]) => resolveRunConfig(req)),
      estimate: vi.fn(async () => ({ seconds: 10, stages: [], unestimated: [], bootstrap: 'shipped', warning: null, shippedBaseEnvs: ['sokoban', 'frozenlake'] })),
      create: vi.fn(),
    },
    envs: {
      list: vi.fn(async () => ({ envs: ['sokoban', 'frozenlake'].map((id) => ({ id, title: id, description: id, actions: [],
        defaultOptions: Object.fromEntries(getEnvDefinition(id).options.map((o) => [o.name, o.default])) })) })),
      render: vi.fn(async () => { throw new Error('no preview in this test'); }),
    },
    templates: { list: vi.fn(async () => ({ templates: [] })) },
    subscribe: vi.fn(() => () => {}),
  };
  return client as unknown as Parameters<typeof NewRunView>[0]['client'];
}

async function openSpaSmoke() {
  render(<NewRunView client={mockClient()} navigate={() => {}} preset="spa" system={null} />);
  const size = await screen.findByTestId('size-select');
  fireEvent.change(size, { target: { value: 'smoke' } });
  // the rl section once the smoke config is validated (rl.steps resolves to smoke's 1)
  await waitFor(() => {
    const steps = document.querySelector<HTMLInputElement>('[data-field="stages.rl.steps"] input');
    expect(steps?.value).toBe('1');
  }, { timeout: 10_000 });
}

describe('New Run form from the run spec', () => {
  it('offers every RL field for spa smoke, with the help from the schema, collapsed, showing the resolved values', async () => {
    await openSpaSmoke();
    const rlKeys = Object.keys(RlSectionSchema.shape);
    expect(rlKeys.length).toBeGreaterThanOrEqual(32);
    const section = screen.getByTestId('stage-section-rl') as HTMLDetailsElement;
    expect(section.tagName).toBe('DETAILS');
    expect(section.open).toBe(false);   // collapsed by default
    for (const key of rlKeys) {
      const path = `stages.rl.${key}`;
      expect(section.querySelector(`[data-field="${path}"]`), path).not.toBeNull();
      const description = (RlSectionSchema.shape as Record<string, z.ZodType>)[key]!.description;
      expect(description, `${path} has a description in the schema`).toBeTruthy();
      expect(screen.getByTestId(`help-${path}`).textContent).toContain(description!.slice(0, 40));
    }
    // resolved values: rl.lr is not set by the preset (the schema default), rl.steps and groupSize are smoke's
    const input = (path: string) => section.querySelector<HTMLInputElement>(`[data-field="${path}"] input`)!;
    expect(input('stages.rl.lr').value).toBe('0.0001');
    expect(input('stages.rl.groupSize').value).toBe('2');
    expect(screen.getByTestId('help-stages.rl.steps').textContent).toMatch(/default 20; the preset\/size sets it/);
    expect(screen.getByTestId('help-stages.rl.lr').textContent).toMatch(/number > 0 · default 0\.0001\)/);
    expect(screen.getByTestId('help-stages.rl.steps').textContent).not.toContain(String(Number.MAX_SAFE_INTEGER));   // zod int()'s bound is noise
    // a nullable enum shows null as null (rl.formatCheck: null = the template's format), not its first choice
    const formatCheck = section.querySelector<HTMLSelectElement>('[data-field="stages.rl.formatCheck"] select')!;
    expect(formatCheck.selectedOptions[0]!.textContent).toBe('null');
    expect(screen.getByTestId('stage-summary-rl').textContent).toMatch(new RegExp(`${rlKeys.length} settings · \\d+ set by the preset/size`));
  });

  it('groups every typed stage section, each field with help; the plan section stays a free record', async () => {
    await openSpaSmoke();
    for (const [name, schema] of Object.entries(StageSectionSchemas)) {
      const section = screen.getByTestId(`stage-section-${name}`);
      for (const key of Object.keys(schema.shape)) expect(section.querySelector(`[data-field="stages.${name}.${key}"]`), `${name}.${key}`).not.toBeNull();
    }
    expect(screen.queryByTestId('stage-section-plan')).toBeNull();   // spa smoke names no plan order
    expect(screen.getByTestId('stage-summary-rwml').textContent).toMatch(/not in this run's plan/);
    // an env option left at its default shows the default: FrozenLake's isSlippery is true unless the run sets it
    expect(document.querySelector<HTMLInputElement>('[data-field="env.options.isSlippery"] input')!.checked).toBe(true);
  });
});

describe('New Run form: the size the user picks', () => {
  // CI stop 49: a size picked right after the select appeared was undone by the effect that picks the preset's first size
  // (its passive effect, still pending, ran after the change event's update). A MutationObserver fires the change as soon
  // as the select is in the DOM, before React's scheduled effects, which makes that order happen every time.
  it('keeps a size chosen before the default-size effect has run', async () => {
    const picked = new Promise<void>((resolve) => {
      const observer = new MutationObserver(() => {
        const select = document.querySelector<HTMLSelectElement>('[data-testid="size-select"]');
        if (!select) return;
        observer.disconnect();
        fireEvent.change(select, { target: { value: 'smoke' } });
        resolve();
      });
      observer.observe(document.body, { childList: true, subtree: true });
    });
    render(<NewRunView client={mockClient()} navigate={() => {}} preset="spa" system={null} />);
    await picked;
    await waitFor(() => {
      const steps = document.querySelector<HTMLInputElement>('[data-field="stages.rl.steps"] input');
      expect(steps?.value).toBe('1');
    }, { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 400));   // past the 200 ms validation debounce: nothing resets the size afterwards
    expect(screen.getByTestId<HTMLSelectElement>('size-select').value).toBe('smoke');
  });
});
