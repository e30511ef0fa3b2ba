/**
 * A saved plan read from its file and checked before anything in it is used: readable, the schema
 * (naming a malformed field), the checksum, and with ORGFORM_PLAN_KEY the signature
 * (plan/saved-plan.ts). What `apply PLANFILE` and `show PLANFILE` both start from.
 */
import { resolve } from 'node:path';
import { describeSize } from '../../config/parse-source.js';
import { loadSchemaValidator } from '../../config/schema-validator.js';
import { OrgformError } from '../../errors.js';
import { findWorkTree, readTextInTree } from '../../work-tree.js';
import { parseSavedPlan, type SavedPlan } from '../saved-plan.js';

/**
 * A saved plan is read as one text (its checksum and signature are over the whole of it), so one
 * larger than V8's longest string cannot be read; plan --out writes it in pieces, so it can exist.
 */
function tooLargeMessage(path: string, size: { bytes: number; limit: number }): string {
  return (
    `Cannot read the plan file ${path}: it is ${describeSize(size.bytes)} (${size.bytes} bytes), over the ${describeSize(size.limit)} ` +
    `(${size.limit} bytes) that orgform can read as one saved plan. Make each saved plan smaller: ` +
    `split the run with --shard i/n or --target, so that each plan --out holds fewer changes, and apply each plan in turn.`
  );
}

/** `path` as the user gave it (shown in errors), relative to `cwd`. */
export async function readSavedPlan(path: string, cwd: string, key: string | undefined): Promise<SavedPlan> {
  let read;
  try {
    // A plan file named in the working tree must stay in it, as every path orgform is given.
    read = await readTextInTree(await findWorkTree(cwd), resolve(cwd, path), 'stay', path);
  } catch (err) {
    throw new OrgformError('PLAN_INVALID', `Cannot read the plan file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  }
  if (!read.ok && read.tooLarge !== undefined) throw new OrgformError('PLAN_INVALID', tooLargeMessage(path, read.tooLarge));
  if (!read.ok) throw new OrgformError('PLAN_INVALID', `Cannot read the plan file: ${read.reason}. Nothing was read from it.`);
  const text = read.text;
  const { validate } = await loadSchemaValidator('saved-plan');
  return parseSavedPlan(text, path, validate, key);
}
