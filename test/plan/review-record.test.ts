import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compareWithReviewed, isSamePlan } from '../../src/plan/compare-with-reviewed.js';
import { digestEssence, digestPlan, essenceOf } from '../../src/plan/plan-digest.js';
import { decodeReviewRecord, encodeReviewRecord, parseReviewMarker, reviewMarker } from '../../src/plan/review-record.js';
import { billing, everyKindPlan, largePlan, makePlan, removeChannel, revokeInvitation, setActive } from '../support/plan-fixtures.js';

const pack = (value: unknown) => gzipSync(JSON.stringify(value)).toString('base64url');

describe('the review record', () => {
  it('packs a plan’s essence and unpacks it whole, checked against its digest', () => {
    const plan = everyKindPlan();
    const record = encodeReviewRecord(essenceOf(plan))!;
    expect(record).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeReviewRecord(record, digestPlan(plan))).toEqual(essenceOf(plan));
  });

  it('is left out when it would be longer than its room, so the comment keeps room for the plan', () => {
    const plan = largePlan(2_000);
    expect(encodeReviewRecord(essenceOf(plan))).toBeUndefined();
    expect(encodeReviewRecord(essenceOf(plan), 10_000_000)).toBeDefined();
  });

  it('is refused when it does not give the digest it is said to have: edited, or another plan’s', () => {
    const plan = everyKindPlan();
    const other = makePlan({ changes: [revokeInvitation('acme', 'inv_9')] });
    expect(() => decodeReviewRecord(encodeReviewRecord(essenceOf(other))!, digestPlan(plan))).toThrow(/does not give its digest sha256:[0-9a-f]{64} \(it was edited\)/);
  });

  it('is refused, naming what is wrong, when it is not a record: cut short, not JSON, malformed, or unpacking past its bound', () => {
    const digest = digestPlan(everyKindPlan());
    expect(() => decodeReviewRecord('H4sIAAAA', digest)).toThrow(/cannot be unpacked/);
    expect(() => decodeReviewRecord(gzipSync('not json').toString('base64url'), digest)).toThrow(/is not JSON/);
    expect(() => decodeReviewRecord(pack({ v: 2, service: 's', changes: [] }), digest)).toThrow(/is not of version 1/);
    expect(() => decodeReviewRecord(pack({ v: 1, service: 's', changes: [['a', 'billing', 'o', null, [['password', 'x']], null, null, null]] }), digest)).toThrow(/malformed change \(1: billing field name\)/);
    expect(() => decodeReviewRecord(pack({ v: 1, service: 's', changes: [['a', 'delete-everything', 'o', null, null, null, null, null]] }), digest)).toThrow(/malformed change \(1: kind\)/);
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)).toString('base64url');
    expect(() => decodeReviewRecord(bomb, digest)).toThrow(/cannot be unpacked/);
  });
});

describe('the marker', () => {
  it('is one HTML comment line, read back with its record or without one', () => {
    const digest = digestPlan(everyKindPlan());
    expect(parseReviewMarker(reviewMarker(digest, 'abc_-1'))).toEqual({ digest, record: 'abc_-1' });
    expect(parseReviewMarker(`  ${reviewMarker(digest)}  `)).toEqual({ digest });
  });

  it('is nothing else: a short digest, extra words, or a line that only holds one', () => {
    const digest = digestPlan(everyKindPlan());
    expect(parseReviewMarker(`<!-- orgform-digest ${digest.slice(0, 20)} -->`)).toBeUndefined();
    expect(parseReviewMarker(`<!-- orgform-digest ${digest} a b -->`)).toBeUndefined();
    expect(parseReviewMarker(`text ${reviewMarker(digest)}`)).toBeUndefined();
    expect(parseReviewMarker(`<!-- orgform-digest ${digest} <script> -->`)).toBeUndefined();
  });
});

describe('compareWithReviewed', () => {
  it('says which changes were added, which are gone and which values changed, and nothing for the same plan', () => {
    const reviewed = makePlan({ changes: [billing('acme', { billingEmail: ['old@acme.test', 'new@acme.test'] }), revokeInvitation('acme', 'inv_2'), setActive('acme', 'globex')], observedActiveId: 'org_globex' });
    const now = makePlan({
      changes: [billing('acme', { billingEmail: ['hand@acme.test', 'new@acme.test'] }), removeChannel('beta', 'ch_1'), setActive('acme', 'initech')],
      observedActiveId: 'org_initech',
    });
    const difference = compareWithReviewed(essenceOf(reviewed), essenceOf(now));
    expect(difference.added.map((c) => c.address)).toEqual(['organisations.beta.notificationChannels.remove.ch_1']);
    expect(difference.gone.map((c) => c.address)).toEqual(['organisations.acme.invitations.revoke.inv_2']);
    expect(difference.changed).toEqual([
      { address: 'activeOrganisation', values: [{ aspect: 'activeFrom', reviewed: 'org_globex', now: 'org_initech' }] },
      { address: 'organisations.acme.billing', values: [{ aspect: 'seen', field: 'billingEmail', reviewed: 'old@acme.test', now: 'hand@acme.test' }] },
    ]);
    expect(difference.service).toBeUndefined();
    expect(isSamePlan(difference)).toBe(false);
    expect(isSamePlan(compareWithReviewed(essenceOf(reviewed), essenceOf(reviewed)))).toBe(true);
    expect(compareWithReviewed(essenceOf(reviewed), { ...essenceOf(reviewed), service: 'https://other.test' }).service).toEqual({ reviewed: reviewed.baseUrl, now: 'https://other.test' });
  });

  it('finds a difference wherever the digests differ, and none where they are the same (any plan of every kind)', () => {
    const plan = everyKindPlan();
    const essence = essenceOf(plan);
    for (let i = 0; i < essence.changes.length; i++) {
      const changes = essence.changes.map((c, j) => (j === i ? { ...c, organisation: `${c.organisation}_x` } : c));
      const edited = { ...essence, changes };
      expect(digestEssence(edited)).not.toBe(digestEssence(essence));
      expect(isSamePlan(compareWithReviewed(essence, edited))).toBe(false);
    }
  });
});
