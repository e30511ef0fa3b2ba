/**
 * Where `plan --out FILE` may save: nowhere that is not a file of its own (as for every file a user
 * names), and over an existing file only when that file is an orgform plan (or empty, as a fresh
 * `mktemp` is), unless --force. `plan -f orgs.yaml --out orgs.yaml` would otherwise replace the
 * configuration with JSON.
 */
import { open } from 'node:fs/promises';
import { UsageError } from '../../errors.js';
import { inspectTarget } from '../../state/write-file-atomically.js';
import type { WorkTree } from '../../work-tree.js';

/** How a saved plan starts: serializeSavedPlan writes `orgformSavedPlan` first (test/commands/plan/check-plan-out.test.ts holds it to that). */
const SAVED_PLAN_START = /^\s*\{\s*"orgformSavedPlan"\s*:/;

/** `path` resolved, `shown` as given; throws a UsageError saying what to do when the plan may not go there. */
export async function checkPlanOut(path: string, shown: string, options: { force: boolean; tree: WorkTree }): Promise<void> {
  const { target, existing } = await inspectTarget(path, { shown, option: '--out', tree: options.tree });
  if (existing === undefined || existing.size === 0 || options.force) return;
  if (!SAVED_PLAN_START.test(await readStart(target))) {
    throw new UsageError(`${shown} exists and is not an orgform plan: --out would replace it. Nothing was written; choose another --out, or pass --force to replace it.`);
  }
}

/** The first bytes of a regular file (inspectTarget has made sure it is one: opening a FIFO would wait). */
async function readStart(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64), 0, 64, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
