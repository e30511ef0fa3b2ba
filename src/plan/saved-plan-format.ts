/**
 * The saved plan's format (version 4): one JSON object a line, so that a plan of any size is written
 * and read a line at a time and is never one text. In this order:
 *
 *   header        {"orgformSavedPlan":4,"record":"header",…}: where and when it was made, the config
 *                 files, the selection, the desired state's own fields (not its organisations)
 *   organisation  a declared organisation each, as planned (after --target and --shard)
 *   observed      the observed values a change depends on, one organisation each, in the order read
 *   change        each change, in the plan's order
 *   unchanged, problem, journaled
 *   end           the active organisation as read, the digest, and how many records of each kind came
 *   trailer       the SHA-256 and, with ORGFORM_PLAN_KEY, the HMAC of every byte before it
 *
 * The reader (saved-plan-reader.ts) refuses anything else, naming the file and line.
 */
import type { ErrorObject } from 'ajv';
import type { DesiredState } from '../model/desired-state.js';
import { OrgformError } from '../errors.js';
import type { Plan } from './types.js';

/** 4: lines (3: one JSON document, orgform 0.3 to 0.x). Another version is refused with what to do. */
export const SAVED_PLAN_VERSION = 4;

/** The longest line read or written: an organisation with 160,000 ids is about 3 MB. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** The shortest ORGFORM_PLAN_KEY taken: an HMAC key is only as strong as it is long. */
export const MIN_PLAN_KEY_LENGTH = 32;

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
  /** SHA-256 of every line before the trailer, as written; a hand edit or truncation breaks it. */
  checksum: string;
  /** HMAC-SHA256 of the same bytes with ORGFORM_PLAN_KEY, when it was set. */
  signature?: string;
}

/** The kinds of record, in the order a file holds them. */
export const RECORD_ORDER = ['header', 'organisation', 'observed', 'change', 'unchanged', 'problem', 'journaled', 'end', 'trailer'] as const;
export type RecordKind = (typeof RECORD_ORDER)[number];

/** How many records of each kind a file holds between its header and its end. */
export interface RecordCounts {
  organisations: number;
  observed: number;
  changes: number;
  unchanged: number;
  problems: number;
  journaled: number;
}

/** The schema's compiled check of one line (config/schema-validator.ts loads it). */
export type SavedPlanValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** A refusal (`where` is the file's path, or `path:line`; `problem` follows it, when there is one). */
export function invalidPlan(where: string, problem: string, path: string): OrgformError {
  return new OrgformError('PLAN_INVALID', `The saved plan ${where}${problem === '' ? '' : ` ${problem}`}. Make a new one with orgform plan --out ${path}.`);
}

/** `change.organisation.id must be string`: the field by its path, and what is wrong with it. */
export function describeSchemaError(error: ErrorObject | undefined): string {
  if (error === undefined) return 'the line does not match the saved plan format';
  const path = fieldPath(error.instancePath);
  const at = path === '' ? 'the record' : path;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path === '' ? '' : `${path}.`}${String(params.missingProperty)} is missing`;
    case 'additionalProperties':
      return `${at} has a field it does not take: ${quoteValue(params.additionalProperty)}`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${at} must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${at} ${error.message ?? 'is not valid'}`;
  }
}

/** A JSON pointer as a path to read: `/change/organisation` → `change.organisation`. */
function fieldPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) path += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) path += path === '' ? part : `.${part}`;
    else path += `[${quoteValue(part)}]`;
  }
  return path;
}

/** The most characters of a file's text a refusal quotes: the file is someone else's, and may be huge. */
const QUOTE_LENGTH = 80;

/**
 * A value read from the file, as a refusal shows it: a string JSON-quoted (control characters
 * escaped) and cut at QUOTE_LENGTH, a number or a literal as it is, anything else by its kind only.
 */
export function quoteValue(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length <= QUOTE_LENGTH) return JSON.stringify(value);
    // Not half a surrogate pair at the cut.
    const cut = value.slice(0, /[\ud800-\udbff]/.test(value[QUOTE_LENGTH - 1] ?? '') ? QUOTE_LENGTH - 1 : QUOTE_LENGTH);
    return `${JSON.stringify(cut)}… (${value.length} characters)`;
  }
  if (value === undefined) return 'missing';
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
