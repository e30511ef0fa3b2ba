/**
 * The saved plan file (`orgform plan --out`): the plan, the desired state it was made from, the
 * hashes of the config files, the base URL, a checksum, and with ORGFORM_PLAN_KEY an HMAC
 * signature. `orgform apply PLANFILE` refuses a file that was truncated, is malformed anywhere
 * (schemas/saved-plan.schema.json, naming the field), was made for another service, or, when the
 * key is set, is not signed with it. The checksum only catches accidents: anyone can recompute it.
 * What keeps an edited file from writing what no one planned is that apply derives the changes
 * again from the desired state and the service and refuses any the file holds that it does not
 * give (plan/find-stale.ts); the signature keeps the desired state itself from being edited.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import type { DesiredState } from '../model/desired-state.js';
import { OrgformError } from '../errors.js';
import type { Plan } from './types.js';
import { stringifyPieces } from './stringify-pieces.js';

/** 3: billing changes carry `declared` and `seen`, and a file may be signed (orgform 0.3). Another version is refused with what to do. */
export const SAVED_PLAN_VERSION = 3;

export interface SavedPlanBody {
  orgformSavedPlan: typeof SAVED_PLAN_VERSION;
  createdAt: string;
  baseUrl: string;
  /** The config files as read when planning, with their SHA-256; paths relative to the directory plan ran in. */
  configFiles: Array<{ path: string; sha256: string }>;
  /**
   * The directory plan ran in, relative to the plan file's own (`.` when saved there), `/`-separated:
   * so that `orgform apply PLANFILE` finds the files and the state from anywhere, as long as the plan
   * file is where --out put it in the checkout. Absent in plans made before it was recorded.
   */
  workdir?: string;
  /** The desired state the plan was made from, after --target and --shard. */
  desired: DesiredState;
  selection: { targets: string[]; shard: string | null };
  plan: Plan;
  /**
   * The plan's digest (plan-digest.ts) as plan printed it, for tools and people comparing it with a
   * reviewed one. Never read back: orgform computes a plan's digest from its changes when it needs one.
   */
  digest?: string;
}

export interface SavedPlan extends SavedPlanBody {
  /** SHA-256 of the body as written; a hand edit or truncation breaks it. */
  checksum: string;
  /** HMAC-SHA256 of the body with ORGFORM_PLAN_KEY, when it was set. */
  signature?: string;
}

/** The schema's compiled check (config/schema-validator.ts loads it). */
export type SavedPlanValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The shortest ORGFORM_PLAN_KEY taken: an HMAC key is only as strong as it is long. */
export const MIN_PLAN_KEY_LENGTH = 32;

function bodyText(body: SavedPlanBody): string {
  return JSON.stringify(body);
}

function checksumOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function signatureOf(text: string, key: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

/** The file's text; signed when `key` (ORGFORM_PLAN_KEY) is given. */
export function serializeSavedPlan(body: SavedPlanBody, key?: string): string {
  return [...serializeSavedPlanPieces(body, key)].join('');
}

/**
 * The same text in pieces, to be written as it is made (plan/stringify-pieces.ts): the checksum and
 * the signature are made first, from the body's compact text in pieces (the same bytes as
 * bodyText's, so they are the ones parseSavedPlan computes), and come last in the file.
 */
export function* serializeSavedPlanPieces(body: SavedPlanBody, key?: string): Generator<string> {
  const checksum = createHash('sha256');
  const signature = key === undefined ? undefined : createHmac('sha256', key);
  for (const piece of stringifyPieces(body)) {
    checksum.update(piece);
    signature?.update(piece);
  }
  const saved: SavedPlan = { ...body, checksum: checksum.digest('hex'), ...(signature === undefined ? {} : { signature: signature.digest('hex') }) };
  // Compact, as the body it checks: indented, a file is about 1.65 times as long, and a saved plan
  // must be read back as one text (work-tree.ts MAX_TEXT_BYTES); `orgform show` is for reading it.
  yield* stringifyPieces(saved);
  yield '\n';
}

function invalid(path: string, problem: string): OrgformError {
  return new OrgformError('PLAN_INVALID', `The saved plan ${path} ${problem}. Make a new one with orgform plan --out ${path}.`);
}

/**
 * Pure: text → saved plan, or a clear refusal. `validate` is the schema's check; `key` is
 * ORGFORM_PLAN_KEY, when set: the file must then be signed with it.
 */
export function parseSavedPlan(text: string, path: string, validate: SavedPlanValidator, key?: string): SavedPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(path, 'is not valid JSON (truncated, or not a plan file)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('orgformSavedPlan' in value)) throw invalid(path, 'is not an orgform plan file');
  const saved = value as Record<string, unknown>;
  if (saved.orgformSavedPlan !== SAVED_PLAN_VERSION) {
    throw invalid(path, `has format version ${JSON.stringify(saved.orgformSavedPlan)}; this orgform reads version ${SAVED_PLAN_VERSION}`);
  }
  const { checksum, signature, ...body } = saved;
  const signed = bodyText(body as unknown as SavedPlanBody);
  if (typeof checksum !== 'string' || checksum !== checksumOf(signed)) {
    throw invalid(path, 'was changed after it was written (its checksum does not match)');
  }
  if (key !== undefined) {
    if (signature === undefined) throw invalid(path, 'is not signed, and ORGFORM_PLAN_KEY is set: only a plan made with the same key is applied');
    if (typeof signature !== 'string' || !sameHex(signature, signatureOf(signed, key))) {
      throw invalid(path, 'is not signed with ORGFORM_PLAN_KEY (the signature does not match: edited, or made with another key)');
    }
  } else if (signature !== undefined) {
    throw new OrgformError(
      'PLAN_INVALID',
      `The saved plan ${path} is signed, but ORGFORM_PLAN_KEY is not set, so the signature cannot be checked. Set ORGFORM_PLAN_KEY to the key the plan was made with.`,
    );
  }
  if (!validate(saved)) throw invalid(path, `has a malformed field: ${describeSchemaError(validate.errors?.[0])}`);
  return saved as unknown as SavedPlan;
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `plan.changes[3].organisation.id must be string`: the field by its path, and what is wrong with it. */
export function describeSchemaError(error: ErrorObject | undefined): string {
  if (error === undefined) return 'the file does not match the saved plan format';
  const path = fieldPath(error.instancePath);
  const at = path === '' ? 'the file' : path;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path === '' ? '' : `${path}.`}${String(params.missingProperty)} is missing`;
    case 'additionalProperties':
      return `${at} has a field it does not take: ${JSON.stringify(params.additionalProperty)}`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${at} must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${at} ${error.message ?? 'is not valid'}`;
  }
}

/** A JSON pointer as a path to read: `/plan/changes/3/organisation` → `plan.changes[3].organisation`. */
function fieldPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) path += path === '' ? part : `.${part}`;
    else path += `[${JSON.stringify(part)}]`;
  }
  return path;
}
