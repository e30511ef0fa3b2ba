/**
 * The reviewed plan for `apply --reviewed FILE`: the marker on the file's last line (a Markdown plan
 * as `plan --format markdown` writes it, or the marker a pipeline took from the plan comment), its
 * digest checked against --expect-digest, and its record, when it has one, unpacked and checked
 * (plan/review-record.ts). Without a record, apply can still compare digests, not say what differs.
 */
import { resolve } from 'node:path';
import { OrgformError } from '../../errors.js';
import { findWorkTree, readTextInTree } from '../../work-tree.js';
import type { PlanEssence } from '../plan-digest.js';
import { decodeReviewRecord, parseReviewMarker } from '../review-record.js';

/** The most a file named by --reviewed may hold: a comment is at most 1,000,000 characters (GitLab's limit). */
const MAX_REVIEWED_LENGTH = 1_100_000;

/** `path` as the user gave it (shown in errors), relative to `cwd`. */
export async function readReviewedPlan(path: string, cwd: string, expectedDigest: string): Promise<PlanEssence | undefined> {
  let read;
  try {
    // A file named in the working tree must stay in it, as every path orgform is given.
    read = await readTextInTree(await findWorkTree(cwd), resolve(cwd, path), 'stay', path);
  } catch (err) {
    throw new OrgformError('PLAN_INVALID', `Cannot read the reviewed plan ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  }
  if (!read.ok) throw new OrgformError('PLAN_INVALID', `Cannot read the reviewed plan: ${read.reason}.`);
  if (read.text.length > MAX_REVIEWED_LENGTH) throw new OrgformError('PLAN_INVALID', `The reviewed plan ${path} is longer than a comment can be: it is not one.`);
  const last = read.text.trimEnd().split('\n').pop() ?? '';
  const marker = parseReviewMarker(last);
  if (marker === undefined) {
    throw new OrgformError('PLAN_INVALID', `The reviewed plan ${path} does not end with orgform's digest marker (<!-- orgform-digest sha256:… -->), as orgform plan --format markdown writes it.`);
  }
  if (marker.digest !== expectedDigest) {
    throw new OrgformError('PLAN_INVALID', `The reviewed plan ${path} is the plan with digest ${marker.digest}, not ${expectedDigest} (--expect-digest): they must be the same plan.`);
  }
  return marker.record === undefined ? undefined : decodeReviewRecord(marker.record, marker.digest);
}
