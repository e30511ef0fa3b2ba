import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSavedPlan } from '../../../src/plan/read/read-saved-plan.js';
import { MAX_TEXT_BYTES, findWorkTree, readTextInTree } from '../../../src/work-tree.js';
import { makeWorkspace } from '../../support/workspace.js';

const mebibytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** A file of `bytes` bytes that takes no room on the disk (a hole), in a fresh workspace. */
async function sparseFile(bytes: number): Promise<string> {
  const cwd = await makeWorkspace();
  await writeFile(join(cwd, 'plan.json'), '');
  await truncate(join(cwd, 'plan.json'), bytes);
  return cwd;
}

describe('readSavedPlan', () => {
  it('refuses a saved plan longer than the longest string before reading it, naming the file, its size, the limit and how to split the run', async () => {
    const cwd = await sparseFile(MAX_TEXT_BYTES + 1);
    const refused = readSavedPlan('plan.json', cwd, undefined);
    await expect(refused).rejects.toMatchObject({ name: 'OrgformError', code: 'PLAN_INVALID' });
    const message = await refused.catch((err: Error) => err.message);
    expect(message).toContain(`Cannot read the plan file plan.json: it is ${mebibytes(MAX_TEXT_BYTES + 1)} (${MAX_TEXT_BYTES + 1} bytes)`);
    expect(message).toContain(`over the ${mebibytes(MAX_TEXT_BYTES)} (${MAX_TEXT_BYTES} bytes) that orgform can read as one saved plan`);
    expect(message).toContain('split the run with --shard i/n or --target');
  });

  it('reads a file within the limit, and judges it by its content (sixteen zero bytes are not a saved plan)', async () => {
    const cwd = await sparseFile(16);
    const message = await readSavedPlan('plan.json', cwd, undefined).catch((err: Error) => err.message);
    expect(message).toContain('plan.json is not valid JSON (truncated, or not a plan file)');
    expect(message).not.toMatch(/can read as one saved plan/);
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
