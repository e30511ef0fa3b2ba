/**
 * A saved plan read from its file and checked before anything in it is used: readable, each line
 * bounded and checked against the schema (naming the line and field), the records in order, the
 * checksum, and with ORGFORM_PLAN_KEY the signature (plan/saved-plan-reader.ts). Read a chunk at a
 * time, so a plan of any size reads back. What `apply PLANFILE` and `show PLANFILE` both start from.
 */
import { resolve } from 'node:path';
import { loadSchemaValidator } from '../../config/schema-validator.js';
import { OrgformError } from '../../errors.js';
import { describeKind } from '../../state/write-file-atomically.js';
import { findWorkTree, openInTree } from '../../work-tree.js';
import type { SavedPlan } from '../saved-plan.js';
import { SavedPlanReader } from '../saved-plan-reader.js';

/** Bytes read at a time. */
const CHUNK_BYTES = 1024 * 1024;

function cannotRead(path: string, err: unknown): OrgformError {
  return new OrgformError('PLAN_INVALID', `Cannot read the plan file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`, { cause: err });
}

/** Refused before a byte of it was read: `reason` says why. */
function notRead(reason: string): OrgformError {
  return new OrgformError('PLAN_INVALID', `Cannot read the plan file: ${reason}. Nothing was read from it.`);
}

/** `path` as the user gave it (shown in errors), relative to `cwd`. */
export async function readSavedPlan(path: string, cwd: string, key: string | undefined): Promise<SavedPlan> {
  let opened;
  try {
    // A plan file named in the working tree must stay in it, as every path orgform is given.
    opened = await openInTree(await findWorkTree(cwd), resolve(cwd, path), 'stay', path);
  } catch (err) {
    throw cannotRead(path, err);
  }
  if (!opened.ok) throw notRead(opened.reason);
  const { handle } = opened;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRead(`${path} is ${describeKind(stats)}`);
    const { validate } = await loadSchemaValidator('saved-plan');
    const reader = new SavedPlanReader(path, validate, key);
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      // The reader keeps only what it needs of a chunk (a line's start), so the buffer is reused.
      reader.push(Buffer.from(buffer.subarray(0, bytesRead)));
    }
    return reader.finish();
  } catch (err) {
    if (err instanceof OrgformError) throw err;
    throw cannotRead(path, err);
  } finally {
    await handle.close();
  }
}
