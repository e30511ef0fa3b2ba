/**
 * The saved plan file (`orgform plan --out`): the plan, the desired state it was made from, the
 * hashes of the config files, the base URL, a checksum, and with ORGFORM_PLAN_KEY an HMAC
 * signature, written a line a record (plan/saved-plan-format.ts) and read back the same way
 * (plan/saved-plan-reader.ts). `orgform apply PLANFILE` refuses a file that was truncated, is
 * malformed anywhere (schemas/saved-plan.schema.json, naming the line and field), was made for
 * another service, or, when the key is set, is not signed with it. The checksum only catches
 * accidents: anyone can recompute it. What keeps an edited file from writing what no one planned is
 * that apply loads the desired state again from the config files the plan names (a plan that holds
 * another is stale), derives the changes from it and the service, and refuses any the file holds
 * that it does not give (plan/find-stale.ts, commands/apply/flow.ts); the signature vouches for
 * what only the file says, such as its list of changes the journal recorded done.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import { OrgformError } from '../errors.js';
import { MAX_LINE_BYTES, type RecordCounts, type SavedPlan, type SavedPlanBody, type SavedPlanValidator } from './saved-plan-format.js';
import { SavedPlanReader } from './saved-plan-reader.js';

export { describeSchemaError, MAX_LINE_BYTES, MIN_PLAN_KEY_LENGTH, SAVED_PLAN_VERSION, type SavedPlan, type SavedPlanBody, type SavedPlanValidator } from './saved-plan-format.js';

/** A line of JSON, ending in a newline. */
function line(record: unknown): string {
  return `${JSON.stringify(record)}\n`;
}

/** The header: the body but for its lists, which follow a record a line. */
function headerLine(body: SavedPlanBody): string {
  const { organisations: _organisations, ...desired } = body.desired;
  return line({
    orgformSavedPlan: body.orgformSavedPlan,
    record: 'header',
    createdAt: body.createdAt,
    baseUrl: body.baseUrl,
    configFiles: body.configFiles,
    ...(body.workdir === undefined ? {} : { workdir: body.workdir }),
    selection: body.selection,
    desired,
    plan: { formatVersion: body.plan.formatVersion, baseUrl: body.plan.baseUrl },
  });
}

/** An observation a change depends on, as its line: what `plan --out` spools as it reads. */
export function observedLine(slug: string, observed: ObservedOrganisation): string {
  return line({ record: 'observed', slug, observed });
}

/** The header and the declared organisations: what precedes the observations. */
function* headLines(body: SavedPlanBody): Generator<string> {
  yield headerLine(body);
  for (const organisation of body.desired.organisations) yield line({ record: 'organisation', organisation });
}

/** The changes and the rest of the plan, and the end record with the counts of every kind. */
function* tailLines(body: SavedPlanBody, observedCount: number): Generator<string> {
  const { plan } = body;
  for (const change of plan.changes) yield line({ record: 'change', change });
  for (const slug of plan.unchanged) yield line({ record: 'unchanged', slug });
  for (const problem of plan.problems) yield line({ record: 'problem', problem });
  for (const address of plan.journaled) yield line({ record: 'journaled', address });
  const counts: RecordCounts = {
    organisations: body.desired.organisations.length,
    observed: observedCount,
    changes: plan.changes.length,
    unchanged: plan.unchanged.length,
    problems: plan.problems.length,
    journaled: plan.journaled.length,
  };
  yield line({ record: 'end', observedActiveId: plan.observedActiveId, ...(body.digest === undefined ? {} : { digest: body.digest }), counts });
}

/** Hashes every line handed over, bounds its length, and makes the trailer of what it saw. */
class LineSigner {
  private readonly checksum: Hash = createHash('sha256');
  private readonly signature: Hmac | undefined;

  constructor(key: string | undefined) {
    this.signature = key === undefined ? undefined : createHmac('sha256', key);
  }

  take(text: string): string {
    // A line the reader would refuse is not written: a saved plan must read back.
    if (text.length * 3 > MAX_LINE_BYTES && Buffer.byteLength(text) > MAX_LINE_BYTES) {
      throw new OrgformError('PLAN_INVALID', `Cannot save the plan: one of its records (${text.slice(0, 80)}…) is longer than the ${MAX_LINE_BYTES} bytes a saved plan's line may be. Split the organisation's lists over several runs.`);
    }
    this.checksum.update(text);
    this.signature?.update(text);
    return text;
  }

  trailer(): string {
    return line({ record: 'trailer', checksum: this.checksum.digest('hex'), ...(this.signature === undefined ? {} : { signature: this.signature.digest('hex') }) });
  }
}

/** The file's lines, from a plan held whole; signed when `key` (ORGFORM_PLAN_KEY) is given. */
export function* serializeSavedPlanPieces(body: SavedPlanBody, key?: string): Generator<string> {
  const signer = new LineSigner(key);
  for (const text of headLines(body)) yield signer.take(text);
  const observed = Object.entries(body.plan.observed);
  for (const [slug, o] of observed) yield signer.take(observedLine(slug, o));
  for (const text of tailLines(body, observed.length)) yield signer.take(text);
  yield signer.trailer();
}

/**
 * The same lines, with the observations from elsewhere (`observed`: their lines, as observedLine
 * made them, spooled while the service was read) rather than from `body.plan.observed`.
 */
export async function* streamSavedPlan(body: SavedPlanBody, observed: AsyncIterable<string>, key?: string): AsyncGenerator<string> {
  const signer = new LineSigner(key);
  for (const text of headLines(body)) yield signer.take(text);
  let count = 0;
  for await (const text of observed) {
    count += 1;
    yield signer.take(text);
  }
  for (const text of tailLines(body, count)) yield signer.take(text);
  yield signer.trailer();
}

/** The file's text; signed when `key` (ORGFORM_PLAN_KEY) is given. */
export function serializeSavedPlan(body: SavedPlanBody, key?: string): string {
  return [...serializeSavedPlanPieces(body, key)].join('');
}

/**
 * Pure: text → saved plan, or a clear refusal naming the line. `validate` is the schema's check of a
 * line; `key` is ORGFORM_PLAN_KEY, when set: the file must then be signed with it.
 */
export function parseSavedPlan(text: string, path: string, validate: SavedPlanValidator, key?: string): SavedPlan {
  const reader = new SavedPlanReader(path, validate, key);
  reader.push(Buffer.from(text, 'utf8'));
  return reader.finish();
}
