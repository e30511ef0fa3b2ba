/**
 * A saved plan's lines as anyone can edit them (format 4, plan/saved-plan-format.ts): parsed a record
 * a line, edited, and signed again, checksum (and, given the key, signature) recomputed over the
 * new bytes before a new trailer. What a pull request's author can do to a plan file.
 */
import { createHash, createHmac } from 'node:crypto';
import { serializeSavedPlan, type SavedPlanBody } from '../../src/plan/saved-plan.js';

export type PlanRecord = Record<string, any>;

/** Every line's record, the trailer included. */
export function recordsOf(text: string): PlanRecord[] {
  return text.trimEnd().split('\n').map((line) => JSON.parse(line) as PlanRecord);
}

/** Lines (without newlines) before a trailer, with a trailer that matches them. */
export function signLines(lines: string[], key?: string): string {
  const body = lines.map((line) => `${line}\n`).join('');
  const checksum = createHash('sha256').update(body).digest('hex');
  const signature = key === undefined ? {} : { signature: createHmac('sha256', key).update(body).digest('hex') };
  return `${body}${JSON.stringify({ record: 'trailer', checksum, ...signature })}\n`;
}

/** The file with `edit` made to its records (the trailer left out) and signed again. */
export function editRecords(text: string, edit: (records: PlanRecord[]) => void, key?: string): string {
  const records = recordsOf(text).filter((r) => r.record !== 'trailer');
  edit(records);
  return signLines(records.map((r) => JSON.stringify(r)), key);
}

/** The record of this kind (the first, or the one `which` picks). */
export function recordOf(records: PlanRecord[], kind: string, which: (r: PlanRecord) => boolean = () => true): PlanRecord {
  const found = records.find((r) => r.record === kind && which(r));
  if (found === undefined) throw new Error(`no ${kind} record`);
  return found;
}

/**
 * The file's records put back together as one body, as anyone could (no check made): what a test
 * edits and writes again with serializeSavedPlan (a new checksum) to play a pull request's author.
 */
export function bodyOf(text: string): Record<string, any> {
  const records = recordsOf(text);
  const { record: _record, desired, plan, ...header } = recordOf(records, 'header');
  const end = recordOf(records, 'end');
  const trailer = recordOf(records, 'trailer');
  const all = (kind: string, field: string) => records.filter((r) => r.record === kind).map((r) => r[field]);
  return {
    ...header,
    desired: { ...desired, organisations: all('organisation', 'organisation') },
    plan: {
      ...plan,
      changes: all('change', 'change'),
      unchanged: all('unchanged', 'slug'),
      problems: all('problem', 'problem'),
      journaled: all('journaled', 'address'),
      observed: Object.fromEntries(records.filter((r) => r.record === 'observed').map((r) => [r.slug, r.observed])),
      observedActiveId: end.observedActiveId,
    },
    ...(end.digest === undefined ? {} : { digest: end.digest }),
    checksum: trailer.checksum,
    ...(trailer.signature === undefined ? {} : { signature: trailer.signature }),
  };
}

/** The file rewritten with `edit` made to its body, checksum recomputed, its signature (if any) kept as it was: all anyone without the key can do. */
export function tamperedText(text: string, edit: (body: Record<string, any>) => void): string {
  const { checksum: _checksum, signature, ...body } = bodyOf(text);
  edit(body);
  const tampered = serializeSavedPlan(body as SavedPlanBody);
  if (signature === undefined) return tampered;
  const lines = tampered.trimEnd().split('\n');
  const trailer = { ...(JSON.parse(lines.pop() as string) as PlanRecord), signature };
  return [...lines, JSON.stringify(trailer), ''].join('\n');
}
