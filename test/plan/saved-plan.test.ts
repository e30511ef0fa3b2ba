import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadSchemaValidator } from '../../src/config/schema-validator.js';
import { OrgformError } from '../../src/errors.js';
import { MAX_LINE_BYTES, parseSavedPlan, serializeSavedPlan, serializeSavedPlanPieces, type SavedPlanBody } from '../../src/plan/saved-plan.js';
import { SavedPlanReader } from '../../src/plan/saved-plan-reader.js';
import { digestPlan } from '../../src/plan/plan-digest.js';
import { editRecords, recordOf, recordsOf, signLines, type PlanRecord } from '../support/saved-plan-lines.js';
import { BASE_URL, desiredFor, desiredOrg, desiredState, largePlan, observedOrg, observedState, planFor } from '../support/plan-fixtures.js';

const PATH = 'plan.json';
const KEY = 'k'.repeat(40);
const { validate } = await loadSchemaValidator('saved-plan');

function savedBody(): SavedPlanBody {
  const desired = desiredState({
    organisations: [desiredOrg({ slug: 'acme', billing: { billingEmail: 'new@acme.test' }, revoke: ['inv_2'] })],
    activeOrganisation: 'acme',
  });
  const plan = planFor(desired, observedState({ organisations: [observedOrg({ slug: 'acme', billing: { billingEmail: 'old@acme.test' } })], activeId: 'org_x' }));
  return {
    orgformSavedPlan: 4,
    createdAt: '2025-01-02T03:04:05.000Z',
    baseUrl: BASE_URL,
    configFiles: desired.files,
    desired,
    selection: { targets: [], shard: null },
    plan,
  };
}

/** The refusal parseSavedPlan gives, or fails the test when it gives none. */
function refusal(text: string, key?: string): OrgformError {
  try {
    parseSavedPlan(text, PATH, validate, key);
  } catch (err) {
    expect(err).toBeInstanceOf(OrgformError);
    return err as OrgformError;
  }
  throw new Error('expected the saved plan to be refused');
}

/** The saved plan with `edit` made to its records and its checksum made to match again, as anyone can. */
function edited(edit: (records: PlanRecord[]) => void, key?: string): string {
  return editRecords(serializeSavedPlan(savedBody()), edit, key);
}

/** The line number (1-based) of the first record of this kind in `text`. */
function lineOf(text: string, kind: string, which: (r: PlanRecord) => boolean = () => true): number {
  return recordsOf(text).findIndex((r) => r.record === kind && which(r)) + 1;
}

const billingChange = (r: PlanRecord) => r.change.kind === 'billing';

describe('saved plans', () => {
  it('read back exactly what was written', () => {
    const body = savedBody();
    const saved = parseSavedPlan(serializeSavedPlan(body), PATH, validate);
    const { checksum, ...rest } = saved;
    // As data: a billing change's display is worked out when shown, and written as its fields.
    expect(rest).toEqual(JSON.parse(JSON.stringify(body)));
    expect(rest.plan.changes.find((c) => c.kind === 'billing')?.display.fields).toEqual(body.plan.changes.find((c) => c.kind === 'billing')?.display.fields);
    expect(checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keep the digest of the plan they hold: a reviewed plan and its saved file name the same changes', () => {
    const body = { ...savedBody(), digest: digestPlan(savedBody().plan) };
    const saved = parseSavedPlan(serializeSavedPlan(body), PATH, validate);
    expect(digestPlan(saved.plan)).toBe(digestPlan(body.plan));
    expect(saved.digest).toBe(body.digest);
  });

  it('are written a record a line: the header first, the format first in it, then the records in order, the trailer last', () => {
    const text = serializeSavedPlan(savedBody());
    expect(text.startsWith('{"orgformSavedPlan":4,"record":"header",')).toBe(true);
    expect(text.endsWith('}\n')).toBe(true);
    expect(recordsOf(text).map((r) => r.record)).toEqual(['header', 'organisation', 'observed', 'change', 'change', 'change', 'end', 'trailer']);
  });

  it('end with the SHA-256, and with a key the HMAC, of exactly the bytes before the trailer', () => {
    for (const key of [undefined, KEY]) {
      const text = serializeSavedPlan(savedBody(), key);
      const body = text.slice(0, text.lastIndexOf('{"record":"trailer"'));
      const trailer = recordsOf(text).at(-1) as PlanRecord;
      expect(trailer.checksum).toBe(createHash('sha256').update(body).digest('hex'));
      expect(trailer.signature).toBe(key === undefined ? undefined : createHmac('sha256', key).update(body).digest('hex'));
    }
  });

  it('are written a line at a time, never as one string, and read back from chunks of any size', () => {
    const plan = largePlan(5_000);
    const large = { ...savedBody(), desired: desiredFor(plan), plan };
    const pieces = [...serializeSavedPlanPieces(large, KEY)];
    expect(pieces.length).toBe(15_000 + 5_000 + 4);
    expect(pieces.every((piece) => piece.endsWith('\n') && piece.indexOf('\n') === piece.length - 1)).toBe(true);
    const bytes = Buffer.from(pieces.join(''));
    for (const size of [1, 7, 4096, bytes.length]) {
      const reader = new SavedPlanReader(PATH, validate, KEY);
      for (let at = 0; at < bytes.length; at += size) reader.push(bytes.subarray(at, at + size));
      expect(reader.finish().plan.changes).toHaveLength(15_000);
    }
  });

  it('are refused when one character of a value was edited', () => {
    const text = serializeSavedPlan(savedBody());
    expect(text).toContain('"new@acme.test"');
    const err = refusal(text.replace('"new@acme.test"', '"new@acme.tesx"'));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH} was changed after it was written (its checksum does not match). Make a new one with orgform plan --out ${PATH}.`);
  });

  it('are refused when the checksum itself was edited or removed', () => {
    const text = serializeSavedPlan(savedBody());
    const lines = text.trimEnd().split('\n');
    const last = lines.length;
    expect(refusal([...lines.slice(0, -1), JSON.stringify({ record: 'trailer', checksum: '0'.repeat(64) }), ''].join('\n')).message).toContain('checksum does not match');
    expect(refusal([...lines.slice(0, -1), JSON.stringify({ record: 'trailer' }), ''].join('\n')).message).toBe(
      `The saved plan ${PATH}:${last} (trailer) has a malformed field: checksum is missing. Make a new one with orgform plan --out ${PATH}.`,
    );
  });

  it('are refused when cut short, in a line or between lines, saying where', () => {
    const text = serializeSavedPlan(savedBody());
    const err = refusal(text.slice(0, Math.floor(text.length / 2)));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toMatch(new RegExp(`^The saved plan ${PATH} ends in the middle of line \\d+ \\(it was cut short, or is not a plan file\\)\\.`));
    const lines = text.split('\n');
    expect(refusal(lines.slice(0, 4).map((l) => `${l}\n`).join('')).message).toBe(
      `The saved plan ${PATH} ends at line 4 without its trailer line (it was cut short). Make a new one with orgform plan --out ${PATH}.`,
    );
    expect(refusal(text.slice(0, -1)).message).toContain('ends in the middle of line 8');
    // Cut inside its first line: still a plan that was cut short, not "not a plan file".
    expect(refusal(text.slice(0, 100)).message).toContain('ends in the middle of line 1 (it was cut short');
    expect(refusal('hello').message).toBe(`The saved plan ${PATH} is not an orgform plan file. Make a new one with orgform plan --out ${PATH}.`);
  });

  it('are refused when anything follows the trailer, even an empty line', () => {
    const text = serializeSavedPlan(savedBody());
    expect(refusal(`${text}\n`).message).toBe(`The saved plan ${PATH}:9 follows the trailer line, which must be the last. Make a new one with orgform plan --out ${PATH}.`);
    expect(refusal(`${text}${text}`).message).toContain(`${PATH}:9 follows the trailer line`);
    expect(refusal(`${text} `).message).toContain(`${PATH}:9 follows the trailer line`);
  });

  it('are refused when written in another format version, naming both versions', () => {
    const err = refusal(edited((records) => (recordOf(records, 'header').orgformSavedPlan = 2)));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain('has format version 2; this orgform reads version 4');
  });

  it('refuse a plan of format 3 (one JSON document) as made by an earlier orgform, however long its one line', () => {
    const v3 = `${JSON.stringify({ orgformSavedPlan: 3, createdAt: 'x', plan: {}, checksum: '0'.repeat(64) })}\n`;
    const message = `The saved plan ${PATH} has format version 3, one JSON document, written by an earlier orgform; this orgform reads version 4, a record a line. Make a new one with orgform plan --out ${PATH}.`;
    expect(refusal(v3).message).toBe(message);
    const reader = new SavedPlanReader(PATH, validate, undefined);
    reader.push(Buffer.from('{"orgformSavedPlan":3,"createdAt":"'));
    const filler = Buffer.alloc(1024 * 1024, 'a');
    let err: unknown;
    try {
      for (let i = 0; i < 20; i += 1) reader.push(filler);
    } catch (e) {
      err = e;
    }
    expect((err as OrgformError).message).toBe(message);
  });

  it.each([
    ['an object of something else', '{"changes": []}'],
    ['an array', '[]'],
    ['a string', '"orgformSavedPlan"'],
    ['null', 'null'],
    ['a number', '1'],
    ['nothing', ''],
    ['sixteen zero bytes', '\0'.repeat(16)],
  ])('are refused when the file is not a plan: %s', (_what, text) => {
    const err = refusal(text);
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH} is not an orgform plan file. Make a new one with orgform plan --out ${PATH}.`);
  });

  it('are refused when parts are missing, even with a matching checksum, naming the line and the part', () => {
    const err = refusal(edited((records) => delete recordOf(records, 'header').plan));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toBe(`The saved plan ${PATH}:1 (header) has a malformed field: plan is missing. Make a new one with orgform plan --out ${PATH}.`);
    expect(refusal(edited((records) => records.splice(records.findIndex((r) => r.record === 'end'), 1))).message).toContain(`${PATH}:7 is the trailer, but the end record is missing before it`);
  });

  it.each([
    ['an organisation id that is a number', 'change', (r: PlanRecord) => (recordOf([r], 'change').change.organisation.id = 42), 'change organisations.acme.billing) has a malformed field: change.organisation.id must be string'],
    ['a change with no address', 'change', (r: PlanRecord) => delete r.change.address, '(change) has a malformed field: change.address is missing'],
    ['an unknown kind of change', 'change', (r: PlanRecord) => (r.change.kind = 'delete-everything'), 'has a malformed field: change.kind must be one of "accept-invitation", "billing"'],
    ['a field the format does not have', 'change', (r: PlanRecord) => (r.change.request = { billingEmail: 'x@y.z' }), 'has a malformed field: change has a field it does not take: "request"'],
    ['declared billing that is not a string', 'organisation', (r: PlanRecord) => (r.organisation.billing.billingEmail = ['x']), '(organisation acme) has a malformed field: organisation.billing.billingEmail must be string'],
    ['invitations that are not a list', 'organisation', (r: PlanRecord) => (r.organisation.invitations.revoke = 'inv_2'), 'organisation.invitations.revoke must be array'],
    ['a seen value of the wrong type', 'change', (r: PlanRecord) => (r.change.seen.billingEmail = 7), 'change.seen.billingEmail must be string,null'],
    ['a slug orgs.yaml would refuse', 'organisation', (r: PlanRecord) => (r.organisation.slug = 'a/b'), 'organisation.slug must match pattern'],
    ['a declared e-mail that is not one', 'organisation', (r: PlanRecord) => (r.organisation.billing.billingEmail = 'nobody'), 'organisation.billing.billingEmail must match format "email"'],
    ['an observation that is not one', 'observed', (r: PlanRecord) => (r.observed.member = 'yes'), '(observed acme) has a malformed field: observed.member must be boolean'],
    ['a count that is not one', 'end', (r: PlanRecord) => (r.counts.changes = -1), '(end) has a malformed field: counts.changes must be >= 0'],
  ])('are refused as invalid, naming the line and the field, when a field is malformed and the checksum matches: %s', (_what, kind, edit, field) => {
    const text = serializeSavedPlan(savedBody());
    const line = lineOf(text, kind, kind === 'change' ? billingChange : undefined);
    const err = refusal(edited((records) => edit(recordOf(records, kind, kind === 'change' ? billingChange : undefined))));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain(`The saved plan ${PATH}:${line} `);
    expect(err.message).toContain(field);
    expect(err.message).not.toMatch(/bug in orgform/);
  });

  it('refuse a line longer than a line may be as soon as it is, without holding the rest', () => {
    const reader = new SavedPlanReader(PATH, validate, undefined);
    const text = serializeSavedPlan(savedBody());
    reader.push(Buffer.from(text.split('\n')[0] + '\n'));
    reader.push(Buffer.from('{"record":"organisation","organisation":{"slug":"'));
    const filler = Buffer.alloc(1024 * 1024, 'a');
    let pushed = 0;
    let err: unknown;
    try {
      for (; pushed < 100; pushed += 1) reader.push(filler);
    } catch (e) {
      err = e;
    }
    // The prefix and 15 MiB fit; the 16th MiB would pass the bound.
    expect(pushed).toBe(MAX_LINE_BYTES / filler.length - 1);
    expect((err as OrgformError).message).toBe(`The saved plan ${PATH}:2 is longer than the ${MAX_LINE_BYTES} bytes a line of a saved plan may be. Make a new one with orgform plan --out ${PATH}.`);
  });

  it.each([
    ['a record of no known kind', (records: PlanRecord[]) => records.splice(2, 0, { record: 'script', run: 'rm -rf /' }), 3, 'is not a record of a saved plan (its "record" is "script"; it must be one of header, organisation'],
    ['a record with no kind', (records: PlanRecord[]) => records.splice(2, 0, { change: {} }), 3, 'its "record" is missing'],
    ['an observation after the changes', (records: PlanRecord[]) => records.splice(5, 0, ...records.splice(2, 1)), 6, '(observed acme) is out of order: an observed record cannot follow a change record'],
    ['a change before the organisations', (records: PlanRecord[]) => records.splice(1, 0, ...records.splice(3, 1)), 2, '(change organisations.acme.billing) is a change of "acme", which the file does not declare before it'],
    ['a second header', (records: PlanRecord[]) => records.splice(2, 0, records[0] as PlanRecord), 3, '(header) is out of order: a header record cannot follow an organisation record'],
    ['a change repeated', (records: PlanRecord[]) => records.splice(4, 0, records[3] as PlanRecord), 5, 'repeats the change organisations.acme'],
    ['an organisation repeated', (records: PlanRecord[]) => records.splice(2, 0, records[1] as PlanRecord), 3, 'repeats the organisation "acme"'],
    ['an observation repeated', (records: PlanRecord[]) => records.splice(3, 0, records[2] as PlanRecord), 4, 'repeats what was observed of "acme"'],
    ['an observation of an organisation not declared', (records: PlanRecord[]) => (records[2] = { ...records[2], slug: 'globex', observed: { ...records[2]?.observed, slug: 'globex' } }), 3, 'holds what was observed of "globex", which the file does not declare'],
    ['a second end', (records: PlanRecord[]) => records.push(records.at(-1) as PlanRecord), 8, '(end) is out of order: an end record cannot follow an end record'],
  ])('are refused, naming the line, when the records are not as written: %s', (_what, edit, line, problem) => {
    const err = refusal(edited((records) => edit(records)));
    expect(err.code).toBe('PLAN_INVALID');
    expect(err.message).toContain(`The saved plan ${PATH}:${line} `);
    expect(err.message).toContain(problem);
  });

  it('are refused when a line is not JSON, naming the line', () => {
    const lines = serializeSavedPlan(savedBody()).trimEnd().split('\n').slice(0, -1);
    lines.splice(2, 0, '{"record":"change",');
    expect(refusal(signLines(lines)).message).toBe(`The saved plan ${PATH}:3 is not valid JSON (edited, or not a plan file). Make a new one with orgform plan --out ${PATH}.`);
  });

  it('quote no more than a short piece of what the file holds in a refusal: a huge record kind, version or field name, a name with escape sequences', () => {
    const lines = serializeSavedPlan(savedBody()).trimEnd().split('\n').slice(0, -1);
    const huge = 'A'.repeat(1_000_000);
    const cases: Array<[string, number]> = [
      [signLines([lines[0] as string, JSON.stringify({ record: huge }), ...lines.slice(1)]), 2],
      [signLines([lines[0] as string, JSON.stringify({ record: { [huge]: 1 } }), ...lines.slice(1)]), 2],
      [signLines([JSON.stringify({ orgformSavedPlan: huge, record: 'header' }), ...lines.slice(1)]), 0],
      [edited((records) => (recordOf(records, 'change', billingChange).change[huge] = 1)), lineOf(serializeSavedPlan(savedBody()), 'change', billingChange)],
      [edited((records) => (records[0]!.desired = { [huge]: { [huge]: 1 } })), 1],
      [edited((records) => (recordOf(records, 'change', billingChange).change.address = `\u001b]0;pwned\u0007${huge}`)), lineOf(serializeSavedPlan(savedBody()), 'change', billingChange)],
    ];
    for (const [text, line] of cases) {
      const { message } = refusal(text);
      expect(message).toContain(line === 0 ? `The saved plan ${PATH} ` : `The saved plan ${PATH}:${line} `);
      expect(message.length).toBeLessThan(400);
      expect(message).not.toMatch(/A{100}|[\u0000-\u001f]/);
    }
  });

  it('refuse a change whose address is not the one its fields give, or of an organisation the file does not declare, naming the line', () => {
    const line = lineOf(serializeSavedPlan(savedBody()), 'change', billingChange);
    const moved = refusal(edited((records) => (recordOf(records, 'change', billingChange).change.address = 'organisations.globex.billing')));
    expect(moved.message).toContain(`The saved plan ${PATH}:${line} (a billing change) has the address "organisations.globex.billing", but its kind, organisation and target give "organisations.acme.billing"`);
    const kind = refusal(edited((records) => (recordOf(records, 'change', (r) => r.change.kind === 'revoke-invitation').change.kind = 'accept-invitation')));
    expect(kind.message).toContain('but its kind, organisation and target give "organisations.acme.invitations.accept.inv_2"');
    const ghost = refusal(
      edited((records) => {
        const { change } = recordOf(records, 'change', billingChange);
        change.organisation.slug = 'ghost';
        change.address = 'organisations.ghost.billing';
      }),
    );
    expect(ghost.message).toContain(`The saved plan ${PATH}:${line} (change organisations.ghost.billing) is a change of "ghost", which the file does not declare before it`);
  });

  it('read an organisation named __proto__ back as data, never as the prototype of what holds it', () => {
    const text = edited((records) => {
      recordOf(records, 'organisation').organisation.slug = '__proto__';
      recordOf(records, 'observed').slug = '__proto__';
      for (const { change } of records.filter((r) => r.record === 'change' && r.change.kind !== 'set-active')) {
        change.organisation.slug = '__proto__';
        change.address = change.address.replace('.acme.', '.__proto__.');
      }
    });
    const saved = parseSavedPlan(text, PATH, validate);
    expect(Object.keys(saved.plan.observed)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(saved.plan.observed)).toBe(Object.prototype);
    expect(saved.plan.observed.__proto__).toMatchObject({ slug: 'acme', member: true });
  });

  it('are refused when the end record counts other records than the file holds (a record left out, checksum recomputed)', () => {
    const err = refusal(edited((records) => records.splice(records.findIndex((r) => r.record === 'change'), 1)));
    expect(err.message).toBe(`The saved plan ${PATH}'s end record counts 3 changes, but the file holds 2. Make a new one with orgform plan --out ${PATH}.`);
  });

  describe('with ORGFORM_PLAN_KEY', () => {
    it('are signed, and read back when the key is the same', () => {
      const text = serializeSavedPlan(savedBody(), KEY);
      const saved = parseSavedPlan(text, PATH, validate, KEY);
      expect(saved.signature).toMatch(/^[0-9a-f]{64}$/);
      expect(saved.plan).toEqual(JSON.parse(JSON.stringify(savedBody().plan)));
    });

    it('refuse a plan that is not signed', () => {
      const err = refusal(serializeSavedPlan(savedBody()), KEY);
      expect(err.code).toBe('PLAN_INVALID');
      expect(err.message).toContain('is not signed, and ORGFORM_PLAN_KEY is set');
    });

    it('refuse a plan signed with another key', () => {
      const err = refusal(serializeSavedPlan(savedBody(), 'x'.repeat(40)), KEY);
      expect(err.message).toContain('is not signed with ORGFORM_PLAN_KEY');
    });

    it('refuse a plan edited after signing, even with its checksum made to match again', () => {
      const text = serializeSavedPlan(savedBody(), KEY);
      const signature = (recordsOf(text).at(-1) as PlanRecord).signature as string;
      const forged = recordsOf(edited((records) => (recordOf(records, 'organisation').organisation.billing.billingEmail = 'thief@evil.test')));
      const trailer = { ...(forged.pop() as PlanRecord), signature };
      const err = refusal([...forged, trailer].map((r) => `${JSON.stringify(r)}\n`).join(''), KEY);
      expect(err.message).toContain('is not signed with ORGFORM_PLAN_KEY');
    });

    it('refuse a plan with a line added after signing, and its checksum and signature kept', () => {
      const text = serializeSavedPlan(savedBody(), KEY);
      const lines = text.trimEnd().split('\n');
      const added = JSON.stringify({ record: 'journaled', address: 'organisations.acme.billing' });
      const err = refusal([...lines.slice(0, -2), added, ...lines.slice(-2), ''].join('\n'), KEY);
      expect(err.message).toContain('checksum does not match');
    });

    it('a signed plan is refused when the key is not set, saying so', () => {
      const err = refusal(serializeSavedPlan(savedBody(), KEY));
      expect(err.code).toBe('PLAN_INVALID');
      expect(err.message).toContain('is signed, but ORGFORM_PLAN_KEY is not set');
    });
  });
});
