// New Run with a model file (issue 37 item 4): a .gguf path in the model-folder field is caught
// (Create is blocked with a pointer to `model import`), the import runs from the form with its
// progress, the folder it wrote becomes the model folder, and the form then shows that folder's
// memory per stage with the GPU size that fits. A tiny llama GGUF (tests/model/gguf-writer.ts)
// stands in for SmolLM2.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyGguf } from '../model/gguf-writer.js';
import { expect, shot, test } from './helpers.js';

test('new run: a .gguf file is offered `model import`, then the folder is selected and its memory per stage shown', async ({ workbench, consoleProblems }) => {
  const { page } = workbench;
  const dir = mkdtempSync(join(tmpdir(), 'spa-e2e-gguf-'));
  const file = join(dir, 'tiny-llama.Q8.gguf');
  writeFileSync(file, tinyGguf());
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByTestId('new-run-button').click();
  await expect(page.getByTestId('preset-spa')).toHaveClass(/active/);
  await page.getByTestId('size-select').selectOption('gpu-24g');
  await page.locator('select[data-path="model.source"]').selectOption('hf-folder');
  await page.locator('[data-path="model.path"]').fill(file);
  // the source change is validated before the path when the page is slow (load ~5+): that in-between state shows two
  // errors ("no model.path"); a strict locator then fails at once, so wait for the .gguf error and then for it alone
  const pathErrors = page.locator('[data-field="model.path"] [data-testid="field-error"]');
  await expect(pathErrors.filter({ hasText: 'a .gguf file is not a model folder' })).toBeVisible();
  await expect(pathErrors).toHaveCount(1);
  await expect(page.getByTestId('create-only')).toBeDisabled();
  const offer = page.getByTestId('gguf-import');
  await expect(offer).toContainText(`spa-workbench model import ${file} --out ${join(dir, 'tiny-llama.Q8')}`);
  await offer.scrollIntoViewIfNeeded();
  await shot(page, 'new-run-gguf-offer-1280');
  await page.getByTestId('gguf-import-start').click();
  await expect(page.getByTestId('gguf-import-done')).toContainText('imported', { timeout: 120_000 });
  await expect(page.locator('[data-path="model.path"]')).toHaveValue(join(dir, 'tiny-llama.Q8'));
  await expect(page.locator('[data-field="model.path"] [data-testid="field-error"]')).toHaveCount(0);
  // the imported folder's memory per stage, and the GPU size that fits it
  const memory = page.getByTestId('model-memory');
  await expect(memory).toContainText('Memory at its peak');
  await expect(page.getByTestId('model-memory-fits')).toHaveText('gpu-24g');
  await memory.locator('summary').click();
  await expect(page.getByTestId('model-memory-stages')).toContainText('SFT step');
  await expect(page.getByTestId('create-only')).toBeEnabled();
  await memory.scrollIntoViewIfNeeded();
  await shot(page, 'new-run-model-memory-1280');
  // unmeasured stages are "not measured yet", never "about 0s"
  await expect(page.getByTestId('run-estimate-total')).not.toHaveText(/about 0s/);
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot(page, 'new-run-model-memory-1440');
  expect(consoleProblems).toEqual([]);
});
