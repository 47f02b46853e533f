// The CORE_LAYERS table in eslint.config.js is a wall only if lint actually fails on a planted upward import.
// These tests lint planted source text as if it lived in a core/ folder, with the project's own config.
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const configFile = join(root, 'eslint.config.js');
const eslint = new ESLint({ cwd: root, overrideConfigFile: configFile });

async function lintAt(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'core-layers/imports' || m.ruleId?.endsWith('no-restricted-imports')).map((m) => m.message);
}

describe('CORE_LAYERS lint', () => {
  it('fails an upward import with the layer message', async () => {
    const envsToHost = await lintAt('core/envs/planted.ts', "import { createDispatcher } from '../host/dispatcher.js';\nexport const d = createDispatcher;\n");
    expect(envsToHost).toHaveLength(1);
    expect(envsToHost[0]).toMatch(/core\/envs may import only core\/\{envs,util,api\}.*core\/host is not below it/);

    const apiToStorage = await lintAt('core/api/planted.ts', "import { readJsonl } from '../storage/jsonl.js';\nexport const r = readJsonl;\n");
    expect(apiToStorage).toHaveLength(1);
    expect(apiToStorage[0]).toMatch(/core\/api may import only core\/\{api,util\}.*core\/storage is not below it/);

    const modelToTrain = await lintAt('core/model/planted.ts', "export type { Stage } from '../train/sft.js';\n");
    expect(modelToTrain.join('\n')).toMatch(/core\/model may import only .*core\/train is not below it/);
  });

  it('holds at any folder depth and for every import form (import(), export from, import type, typeof import)', async () => {
    const layer = /core\/host may import only .*core\/train is not below it/;
    // depth 2: core/host/handlers/x.ts reaching up into core/train
    const deep = await lintAt('core/host/handlers/planted.ts', "import { sftStage } from '../../train/sft.js';\nexport const s = sftStage;\n");
    expect(deep).toHaveLength(1);
    expect(deep[0]).toMatch(layer);
    // depth 3 and a roundabout spelling of the same path
    expect(await lintAt('core/host/handlers/deeper/planted.ts', "export * from '../../../train/sft.js';\n")).toEqual([expect.stringMatching(layer)]);
    expect(await lintAt('core/host/planted.ts', "export { sftStage } from './../train/sft.js';\n")).toEqual([expect.stringMatching(layer)]);
    // dynamic import() and template-literal import()
    const dynamic = await lintAt('core/host/planted.ts', "export async function f() { return (await import('../train/sft.js')).sftStage; }\n");
    expect(dynamic).toEqual([expect.stringMatching(layer)]);
    expect(await lintAt('core/model/torch/planted.ts', 'export const f = () => import(`../../host/dispatcher.js`);\n'))
      .toEqual([expect.stringMatching(/core\/model may import only .*core\/host is not below it/)]);
    // type-level imports are dependencies too
    expect(await lintAt('core/envs/planted.ts', "import type { Stage } from '../train/sft.js';\nexport type S = Stage;\n")).toHaveLength(1);
    expect(await lintAt('core/envs/planted.ts', "export type S = typeof import('../train/sft.js');\n")).toHaveLength(1);
    // package bans hold for import() too
    expect(await lintAt('core/envs/planted.ts', "export const f = () => import('node:fs');\n")).toEqual([expect.stringMatching(/pure: no fs/)]);
    expect(await lintAt('core/eval/nested/planted.ts', "export const f = () => import('@tensorflow/tfjs');\n")).toEqual([expect.stringMatching(/Only core\/model and core\/train import TF\.js/)]);
    expect(await lintAt('core/host/handlers/planted.ts', "import '../../../renderer/src/main.js';\n")).toEqual([expect.stringMatching(/never imports renderer/)]);
    expect(await lintAt('core/host/handlers/planted.ts', "import 'electron';\n")).toEqual([expect.stringMatching(/never imports electron/)]);
    // allowed at depth: a nested file importing within its own folder or a folder below
    expect(await lintAt('core/model/torch/planted.ts', "import { Rng } from '../../util/rng.js';\nimport { x } from '../tokenizer.js';\nexport const r = [Rng, x];\n")).toEqual([]);
    expect(await lintAt('core/host/handlers/planted.ts', "export const f = () => import('../../engine/runner.js');\n")).toEqual([]);
  });

  it('passes an import the table allows', async () => {
    expect(await lintAt('core/prompts/planted.ts', "import { createEnv } from '../envs/index.js';\nexport const m = createEnv;\n")).toEqual([]);
    expect(await lintAt('core/model/planted.ts', "import { Rng } from '../util/rng.js';\nexport const r = Rng;\n")).toEqual([]);
    expect(await lintAt('core/host/planted.ts', "import { WorkbenchError } from '../api/errors.js';\nexport const e = WorkbenchError;\n")).toEqual([]);
  });

  it('has a row for every core/ folder, naming only known folders', async () => {
    const { readdirSync } = await import('node:fs');
    const { CORE_LAYERS } = (await import(pathToFileURL(configFile).href)) as { CORE_LAYERS: Record<string, string[]> };
    const folders = readdirSync(join(root, 'core'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    expect(Object.keys(CORE_LAYERS).sort()).toEqual(folders);
    for (const [folder, below] of Object.entries(CORE_LAYERS)) {
      for (const b of below) expect(folders, `${folder} -> ${b}`).toContain(b);
    }
  });

  it('lets the renderer run the zod-free wire client, and keeps that file free of run-time imports', async () => {
    expect(await lintAt('renderer/src/api/planted.ts', "import { SubscriptionTable } from '../../../core/api/wire.js';\nexport const t = SubscriptionTable;\n")).toEqual([]);
    const client = await lintAt('renderer/src/api/planted.ts', "import { createRpcClient } from '../../../core/api/client.js';\nexport const c = createRpcClient;\n");
    expect(client.join('\n')).toMatch(/renderer\/ imports only types from core\/api/);
    expect(await lintAt('core/api/wire.ts', "import type { WorkbenchEvent } from './contract.js';\nexport type E = WorkbenchEvent;\n")).toEqual([]);
    const runtime = await lintAt('core/api/wire.ts', "import { apiMethodNames } from './contract.js';\nexport const n = apiMethodNames;\n");
    expect(runtime.join('\n')).toMatch(/wire\.ts imports only types/);
  });
});
