import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSavedPlan } from '../../../src/plan/read/read-saved-plan.js';
import { SAVED_PLAN_VERSION, serializeSavedPlanPieces, type SavedPlanBody } from '../../../src/plan/saved-plan.js';
import { MAX_TEXT_BYTES, findWorkTree, readTextInTree } from '../../../src/work-tree.js';
import { BASE_URL, desiredFor, desiredOrg, desiredState, largePlan } from '../../support/plan-fixtures.js';
import { makeWorkspace } from '../../support/workspace.js';

/** A file of `bytes` bytes that takes no room on the disk (a hole), in a fresh workspace. */
async function sparseFile(bytes: number): Promise<string> {
  const cwd = await makeWorkspace();
  await writeFile(join(cwd, 'plan.json'), '');
  await truncate(join(cwd, 'plan.json'), bytes);
  return cwd;
}

describe('readSavedPlan', () => {
  it('reads a saved plan a chunk at a time, lines falling across chunks, and gives back what was written', async () => {
    const plan = largePlan(10_000);
    const desired = desiredFor(plan);
    const body: SavedPlanBody = { orgformSavedPlan: SAVED_PLAN_VERSION, createdAt: '2026-01-01T00:00:00.000Z', baseUrl: BASE_URL, configFiles: desired.files, desired, selection: { targets: [], shard: null }, plan };
    const text = [...serializeSavedPlanPieces(body)].join('');
    // Several of the reader's chunks (a mebibyte each).
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 2 ** 20);
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'plan.json'), text);
    const saved = await readSavedPlan('plan.json', cwd, undefined);
    expect(saved.plan.changes).toEqual(JSON.parse(JSON.stringify(body.plan.changes)));
    expect(saved.desired.organisations.map((o) => o.slug)).toEqual(desired.organisations.map((o) => o.slug));
  });

  it('judges a file longer than the longest string by its content, refusing it at its first line (sixteen bytes or 512 MiB of zeros are not a saved plan)', async () => {
    for (const bytes of [16, MAX_TEXT_BYTES + 1]) {
      const cwd = await sparseFile(bytes);
      const message = await readSavedPlan('plan.json', cwd, undefined).catch((err: Error) => err.message);
      expect(message).toBe('The saved plan plan.json is not an orgform plan file. Make a new one with orgform plan --out plan.json.');
    }
  });
});

describe('readTextInTree', () => {
  it('says a file is too large to be one text, with its size, without reading it', async () => {
    const cwd = await sparseFile(MAX_TEXT_BYTES + 10);
    const read = await readTextInTree(await findWorkTree(cwd), join(cwd, 'plan.json'), 'stay', 'plan.json');
    expect(read).toEqual({
      ok: false,
      reason: `plan.json is ${MAX_TEXT_BYTES + 10} bytes, more than the ${MAX_TEXT_BYTES} that can be read as one text`,
      tooLarge: { bytes: MAX_TEXT_BYTES + 10, limit: MAX_TEXT_BYTES },
    });
  });
});
