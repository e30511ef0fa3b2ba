/**
 * The saved plan file (`orgform plan --out`): the plan, the desired state it was made from, the
 * hashes of the config files, the base URL, and a checksum, so that `orgform apply PLANFILE` can
 * refuse a file that was edited, truncated or made for another service.
 */
import { createHash } from 'node:crypto';
import type { DesiredState } from '../config/types.js';
import { OrgformError } from '../errors.js';
import type { Plan } from './types.js';

/** 2: billing changes may be `knownAfter` their accept (orgform 0.2). A version-1 file is refused with what to do. */
export const SAVED_PLAN_VERSION = 2;

export interface SavedPlanBody {
  orgformSavedPlan: typeof SAVED_PLAN_VERSION;
  createdAt: string;
  baseUrl: string;
  /** The config files as read when planning, with their SHA-256. */
  configFiles: Array<{ path: string; sha256: string }>;
  /** The desired state the plan was made from, after --target and --shard. */
  desired: DesiredState;
  selection: { targets: string[]; shard: string | null };
  plan: Plan;
}

export interface SavedPlan extends SavedPlanBody {
  /** SHA-256 of the body as written; a hand edit or truncation breaks it. */
  checksum: string;
}

function checksumOf(body: SavedPlanBody): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

export function serializeSavedPlan(body: SavedPlanBody): string {
  const saved: SavedPlan = { ...body, checksum: checksumOf(body) };
  return JSON.stringify(saved, null, 2) + '\n';
}

function invalid(path: string, problem: string): OrgformError {
  return new OrgformError('PLAN_INVALID', `The saved plan ${path} ${problem}. Make a new one with orgform plan --out ${path}.`);
}

/** Pure: text → saved plan, or a clear refusal. */
export function parseSavedPlan(text: string, path: string): SavedPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(path, 'is not valid JSON (truncated, or not a plan file)');
  }
  const saved = value as Partial<SavedPlan> | null;
  if (typeof saved !== 'object' || saved === null || !('orgformSavedPlan' in saved)) throw invalid(path, 'is not an orgform plan file');
  if (saved.orgformSavedPlan !== SAVED_PLAN_VERSION) {
    throw invalid(path, `has format version ${String(saved.orgformSavedPlan)}; this orgform reads version ${SAVED_PLAN_VERSION}`);
  }
  const { checksum, ...body } = saved as SavedPlan;
  if (typeof checksum !== 'string' || checksum !== checksumOf(body)) {
    throw invalid(path, 'was changed after it was written (its checksum does not match)');
  }
  if (!body.plan || !Array.isArray(body.plan.changes) || !body.desired || typeof body.baseUrl !== 'string') {
    throw invalid(path, 'is missing parts of the plan');
  }
  return saved as SavedPlan;
}
