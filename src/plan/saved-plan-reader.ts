/**
 * A saved plan read a line at a time (plan/saved-plan-format.ts): pure, handed the file's bytes in
 * chunks of any size, so that no text longer than a line is ever held. Each line is bounded, parsed
 * on its own and checked against the schema by its kind; the records must come in the format's
 * order, each organisation, observation, change and address once; the end record's counts must be
 * those read; the trailer's checksum (and, with ORGFORM_PLAN_KEY, signature) must be those of every
 * byte before it, and nothing may follow it. Nothing read is handed out before the trailer is checked.
 */
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import { OrgformError } from '../errors.js';
import { changeAddress } from '../model/address.js';
import type { DesiredOrganisation, DesiredState } from '../model/desired-state.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { PlanProblem } from '../model/plan-problem.js';
import type { Change } from './types.js';
import { describeSchemaError, invalidPlan, quoteValue, MAX_LINE_BYTES, RECORD_ORDER, SAVED_PLAN_VERSION, type RecordCounts, type RecordKind, type SavedPlan, type SavedPlanValidator } from './saved-plan-format.js';

const NEWLINE = 0x0a;

const NOT_A_PLAN = 'is not an orgform plan file';
const AFTER_TRAILER = 'follows the trailer line, which must be the last';

/** What a line holds once its kind is known and the schema has checked it. */
type Line = Record<string, unknown> & { record: RecordKind };

type Header = Omit<SavedPlan, 'desired' | 'plan' | 'checksum' | 'signature' | 'digest'> & {
  desired: Omit<DesiredState, 'organisations'>;
  plan: { formatVersion: 3; baseUrl: string };
};

export class SavedPlanReader {
  private lineNo = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private kind: RecordKind | undefined;
  private header: Header | undefined;
  private readonly organisations: DesiredOrganisation[] = [];
  private readonly declared = new Set<string>();
  private readonly observed = new Map<string, ObservedOrganisation>();
  private readonly changes: Change[] = [];
  private readonly addresses = new Set<string>();
  private readonly unchanged: string[] = [];
  private readonly unchangedSeen = new Set<string>();
  private readonly problems: PlanProblem[] = [];
  private readonly journaled: string[] = [];
  private readonly journaledSeen = new Set<string>();
  private end: { observedActiveId: string | null; digest?: string; counts: RecordCounts } | undefined;
  private trailer: { checksum: string; signature?: string } | undefined;
  private readonly checksum: Hash = createHash('sha256');
  private readonly signature: Hmac | undefined;

  /** `path` as the user gave it (named in every refusal); `key` is ORGFORM_PLAN_KEY, when set. */
  constructor(
    private readonly path: string,
    private readonly validate: SavedPlanValidator,
    private readonly key: string | undefined,
  ) {
    this.signature = key === undefined ? undefined : createHmac('sha256', key);
  }

  /** The next bytes of the file. */
  push(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
      this.keep(chunk.subarray(start, at));
      const bytes = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      this.readLine(bytes);
      start = at + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The plan, once every byte has been pushed. */
  finish(): SavedPlan {
    if (this.pendingBytes > 0) {
      if (this.trailer !== undefined) throw this.refuseLine(this.lineNo + 1, AFTER_TRAILER);
      // A first line cut short: a plan's start says so (or which version it is), anything else is not a plan.
      if (this.lineNo === 0) this.checkStart(Buffer.concat(this.pending).subarray(0, 64).toString('utf8'));
      throw this.refuse(`ends in the middle of line ${this.lineNo + 1} (it was cut short, or is not a plan file)`);
    }
    if (this.header === undefined) throw this.refuse(NOT_A_PLAN);
    if (this.trailer === undefined) throw this.refuse(`ends at line ${this.lineNo} without its trailer line (it was cut short)`);
    return this.plan(this.header, this.end as NonNullable<typeof this.end>, this.trailer);
  }

  private keep(part: Buffer): void {
    this.pendingBytes += part.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      if (this.lineNo === 0) this.checkStart(Buffer.concat([...this.pending, part]).subarray(0, 64).toString('utf8'));
      throw this.refuseLine(this.lineNo + 1, `is longer than the ${MAX_LINE_BYTES} bytes a line of a saved plan may be`);
    }
    this.pending.push(part);
  }

  private readLine(bytes: Buffer): void {
    this.lineNo += 1;
    const n = this.lineNo;
    if (this.trailer !== undefined) throw this.refuseLine(n, AFTER_TRAILER);
    const value = this.parse(bytes, n);
    if (n === 1) this.readHeader(value);
    else this.readRecord(value, n);
    if (value.record !== 'trailer') {
      this.checksum.update(bytes).update('\n');
      this.signature?.update(bytes).update('\n');
    }
  }

  private parse(bytes: Buffer, n: number): Line {
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      if (n === 1) throw this.refuse(NOT_A_PLAN);
      throw this.refuseLine(n, 'is not valid JSON (edited, or not a plan file)');
    }
    if (n === 1) {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !('orgformSavedPlan' in value)) throw this.refuse(NOT_A_PLAN);
      this.checkVersion((value as { orgformSavedPlan: unknown }).orgformSavedPlan);
    }
    const kind = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { record?: unknown }).record : undefined;
    if (typeof kind !== 'string' || !(RECORD_ORDER as readonly string[]).includes(kind)) {
      throw this.refuseLine(n, `is not a record of a saved plan (its "record" is ${quoteValue(kind)}; it must be one of ${RECORD_ORDER.join(', ')})`);
    }
    if (!this.validate(value)) throw this.refuseLine(n, `(${describeRecord(value as Line)}) has a malformed field: ${describeSchemaError(this.validate.errors?.[0])}`);
    return value as Line;
  }

  /** A first line too long to parse: a plan file's (version 3 was one line) only if it starts as one. */
  private checkStart(start: string): void {
    const version = /^\{"orgformSavedPlan":(\d+)[,}]/.exec(start)?.[1];
    if (version === undefined) throw this.refuse(NOT_A_PLAN);
    this.checkVersion(Number(version));
  }

  private checkVersion(v: unknown): void {
    if (v === SAVED_PLAN_VERSION) return;
    if (v === 3) throw this.refuse(`has format version 3, one JSON document, written by an earlier orgform; this orgform reads version ${SAVED_PLAN_VERSION}, a record a line`);
    throw this.refuse(`has format version ${v === undefined ? 'none' : quoteValue(v)}; this orgform reads version ${SAVED_PLAN_VERSION}`);
  }

  private readHeader(value: Line): void {
    if (value.record !== 'header') throw this.refuseLine(1, 'is not the header (an orgform plan file starts with one)');
    const { record: _record, ...header } = value;
    this.header = header as unknown as Header;
    this.kind = 'header';
  }

  private readRecord(value: Line, n: number): void {
    const kind = value.record;
    const previous = this.kind as RecordKind;
    if (kind === 'header' || RECORD_ORDER.indexOf(kind) < RECORD_ORDER.indexOf(previous) || (kind === previous && (kind === 'end' || kind === 'trailer'))) {
      throw this.refuseLine(n, `(${describeRecord(value)}) is out of order: ${withArticle(kind)} record cannot follow ${withArticle(previous)} record`);
    }
    if (kind !== 'trailer' && kind !== 'end' && previous === 'end') throw this.refuseLine(n, `(${describeRecord(value)}) follows the end record`);
    this.kind = kind;
    this.take(value, n);
  }

  private take(value: Line, n: number): void {
    switch (value.record) {
      case 'organisation': {
        const organisation = value.organisation as DesiredOrganisation;
        this.once(this.declared, organisation.slug, n, `organisation ${JSON.stringify(organisation.slug)}`);
        this.organisations.push(organisation);
        break;
      }
      case 'observed': {
        const slug = value.slug as string;
        if (!this.declared.has(slug)) throw this.refuseLine(n, `holds what was observed of ${JSON.stringify(slug)}, which the file does not declare`);
        if (this.observed.has(slug)) throw this.refuseLine(n, `repeats what was observed of ${JSON.stringify(slug)}`);
        this.observed.set(slug, value.observed as ObservedOrganisation);
        break;
      }
      case 'change': {
        const change = value.change as Change;
        this.checkChange(change, n);
        this.once(this.addresses, change.address, n, `change ${change.address}`);
        this.changes.push(change);
        break;
      }
      case 'unchanged':
        this.once(this.unchangedSeen, value.slug as string, n, `unchanged organisation ${JSON.stringify(value.slug)}`);
        this.unchanged.push(value.slug as string);
        break;
      case 'problem':
        this.problems.push(value.problem as PlanProblem);
        break;
      case 'journaled':
        this.once(this.journaledSeen, value.address as string, n, `journaled change ${String(value.address)}`);
        this.journaled.push(value.address as string);
        break;
      case 'end':
        this.end = value as unknown as NonNullable<typeof this.end>;
        break;
      case 'trailer':
        if (this.end === undefined) throw this.refuseLine(n, 'is the trailer, but the end record is missing before it');
        this.trailer = value as unknown as NonNullable<typeof this.trailer>;
        break;
      default:
        throw this.refuseLine(n, 'is a second header');
    }
  }

  /**
   * A change's address is what its kind, organisation and target give, and its organisation one the
   * file declares (the active organisation's may be outside the selection): so that what `show`
   * lists under an address is the change apply would match against that address.
   */
  private checkChange(change: Change, n: number): void {
    const address = changeAddress(change.kind, change.organisation.slug, 'targetId' in change ? change.targetId : undefined);
    if (change.address !== address) throw this.refuseLine(n, `(a ${change.kind} change) has the address ${quoteValue(change.address)}, but its kind, organisation and target give ${quoteValue(address)}`);
    if (change.kind !== 'set-active' && !this.declared.has(change.organisation.slug)) {
      throw this.refuseLine(n, `(change ${address}) is a change of ${JSON.stringify(change.organisation.slug)}, which the file does not declare before it`);
    }
  }

  private once(seen: Set<string>, key: string, n: number, what: string): void {
    if (seen.has(key)) throw this.refuseLine(n, `repeats the ${what}`);
    seen.add(key);
  }

  /** The trailer's checks, the counts, and the plan put together. */
  private plan(header: Header, end: NonNullable<typeof this.end>, trailer: NonNullable<typeof this.trailer>): SavedPlan {
    this.checkTrailer(trailer);
    const counts: RecordCounts = {
      organisations: this.organisations.length,
      observed: this.observed.size,
      changes: this.changes.length,
      unchanged: this.unchanged.length,
      problems: this.problems.length,
      journaled: this.journaled.length,
    };
    for (const [name, count] of Object.entries(counts) as Array<[keyof RecordCounts, number]>) {
      if (end.counts[name] !== count) throw invalidPlan(`${this.path}'s end record counts ${end.counts[name]} ${name}, but the file holds ${count}`, '', this.path);
    }
    const { desired, plan, ...rest } = header;
    return {
      ...rest,
      desired: { ...desired, organisations: this.organisations },
      plan: {
        ...plan,
        changes: this.changes,
        unchanged: this.unchanged,
        problems: this.problems,
        journaled: this.journaled,
        observed: Object.fromEntries(this.observed),
        observedActiveId: end.observedActiveId,
      },
      ...(end.digest === undefined ? {} : { digest: end.digest }),
      checksum: trailer.checksum,
      ...(trailer.signature === undefined ? {} : { signature: trailer.signature }),
    };
  }

  private checkTrailer(trailer: NonNullable<typeof this.trailer>): void {
    if (!sameHex(trailer.checksum, this.checksum.digest('hex'))) throw this.refuse('was changed after it was written (its checksum does not match)');
    if (this.signature !== undefined) {
      if (trailer.signature === undefined) throw this.refuse('is not signed, and ORGFORM_PLAN_KEY is set: only a plan made with the same key is applied');
      if (!sameHex(trailer.signature, this.signature.digest('hex'))) {
        throw this.refuse('is not signed with ORGFORM_PLAN_KEY (the signature does not match: edited, or made with another key)');
      }
    } else if (trailer.signature !== undefined) {
      throw new OrgformError(
        'PLAN_INVALID',
        `The saved plan ${this.path} is signed, but ORGFORM_PLAN_KEY is not set, so the signature cannot be checked. Set ORGFORM_PLAN_KEY to the key the plan was made with.`,
      );
    }
  }

  private refuse(problem: string) {
    return invalidPlan(this.path, problem, this.path);
  }

  private refuseLine(n: number, problem: string) {
    return invalidPlan(`${this.path}:${n}`, problem, this.path);
  }
}

/** `change organisations.acme.billing`: a record by its kind and what it is of, for messages. */
function describeRecord(value: Line): string {
  const of = (x: unknown, key: string): unknown => (typeof x === 'object' && x !== null ? (x as Record<string, unknown>)[key] : undefined);
  const name = of(value.change, 'address') ?? of(value.organisation, 'slug') ?? of(value.problem, 'address') ?? value.slug ?? value.address;
  // A name as written when it is plain (as it always is in a plan orgform wrote), else quoted and cut.
  return typeof name === 'string' ? `${value.record} ${/^[\x21-\x7e]{1,80}$/.test(name) ? name : quoteValue(name)}` : value.record;
}

function withArticle(kind: RecordKind): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
