import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { ChangeKind } from '../../../src/model/change-kind.js';
import type { Action } from '../../../src/plan/types.js';
import { renderJson, renderJsonPieces, wireAction, wireKind } from '../../../src/text/plan/render-json.js';
import { acceptInvitation, billing, billingKnownAfterAccept, everyKindPlan, largePlan, makePlan, setActive } from '../../support/plan-fixtures.js';

// Written as records so that the type checker fails here when a kind or an action is added.
const ALL_KINDS = Object.keys({
  'accept-invitation': true,
  billing: true,
  'revoke-invitation': true,
  'remove-channel': true,
  'set-active': true,
} satisfies Record<ChangeKind, true>) as ChangeKind[];
const ALL_ACTIONS = Object.keys({ accept: true, update: true, delete: true } satisfies Record<Action, true>) as Action[];

const schema = JSON.parse(readFileSync(new URL('../../../schemas/plan.schema.json', import.meta.url), 'utf8')) as object;
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

describe('renderJson', () => {
  it('writes the versioned document with wire strings and before/after per kind', () => {
    expect(renderJson(everyKindPlan())).toMatchInlineSnapshot(`
      "{
        "format_version": "1.2",
        "base_url": "https://orgs.example.test",
        "digest": "sha256:326ea549468163654b510d6dd2c8228ff1ff98db678ac5a1e382979efabd39f5",
        "summary": {
          "change": 2,
          "remove": 2,
          "accept": 1,
          "unchanged": 2,
          "problems": 1
        },
        "changes": [
          {
            "address": "organisations.acme.billing",
            "action": "update",
            "kind": "billing_update",
            "organisation": {
              "slug": "acme",
              "id": "org_acme"
            },
            "before": {
              "billingEmail": "old@acme.test",
              "customerID": null
            },
            "after": {
              "billingEmail": "new@acme.test",
              "customerID": "cus_1"
            }
          },
          {
            "address": "organisations.acme.invitations.accept.inv_1",
            "action": "accept",
            "kind": "invitation_accept",
            "organisation": {
              "slug": "acme",
              "id": "org_acme"
            },
            "target_id": "inv_1",
            "before": null,
            "after": {
              "invitation": "inv_1"
            }
          },
          {
            "address": "organisations.acme.invitations.revoke.inv_2",
            "action": "delete",
            "kind": "invitation_revoke",
            "organisation": {
              "slug": "acme",
              "id": "org_acme"
            },
            "target_id": "inv_2",
            "before": {
              "invitation": "inv_2"
            },
            "after": null,
            "note": "cannot be checked before apply: the interface cannot list invitations"
          },
          {
            "address": "organisations.globex.notificationChannels.remove.ch_9",
            "action": "delete",
            "kind": "notification_channel_remove",
            "organisation": {
              "slug": "globex",
              "id": "org_globex"
            },
            "target_id": "ch_9",
            "before": {
              "notification_channel": "ch_9"
            },
            "after": null
          },
          {
            "address": "activeOrganisation",
            "action": "update",
            "kind": "active_organisation_set",
            "organisation": {
              "slug": "acme",
              "id": "org_acme"
            },
            "before": {
              "organisation": "globex"
            },
            "after": {
              "organisation": "acme"
            }
          }
        ],
        "unchanged": [
          "hooli",
          "initech"
        ],
        "problems": [
          {
            "organisation": "umbrella",
            "address": "organisations.umbrella",
            "message": "getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member"
          }
        ],
        "journaled": [
          "organisations.acme.invitations.accept.inv_0"
        ]
      }
      "
    `);
  });

  it('is made in pieces that join to JSON.stringify of the document, indented, ending in a newline', () => {
    for (const plan of [everyKindPlan(), makePlan(), largePlan(5_000), makePlan({ changes: [billingKnownAfterAccept('acme', 'inv_1', { billingEmail: 'b@acme.test' })] })]) {
      const pieces = [...renderJsonPieces(plan)];
      const text = pieces.join('');
      // The document's content is held by the snapshot above; this holds the bytes to JSON.stringify's own.
      expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
      expect(text).toBe(renderJson(plan));
    }
    // 15,000 changes: handed over in pieces of about 64 KB.
    expect([...renderJsonPieces(largePlan(5_000))].length).toBeGreaterThan(20);
  });

  it('validates against schemas/plan.schema.json, with and without changes', () => {
    for (const plan of [everyKindPlan(), makePlan(), largePlan(20), makePlan({ changes: [setActive('acme', undefined)] })]) {
      const document: unknown = JSON.parse(renderJson(plan));
      expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('is rejected by the schema when a field is added, a kind is unknown or before/after do not match the kind', () => {
    const good = JSON.parse(renderJson(everyKindPlan())) as { changes: Array<Record<string, unknown>>; extra?: boolean };
    const changed = (edit: (d: typeof good) => void): unknown => {
      const copy = structuredClone(good);
      edit(copy);
      return copy;
    };
    expect(validate(changed((d) => (d.extra = true)))).toBe(false);
    expect(validate(changed((d) => (d.changes[0]!.kind = 'billing')))).toBe(false);
    expect(validate(changed((d) => (d.changes[1]!.before = { invitation: 'inv_1' })))).toBe(false);
    expect(validate(changed((d) => (d.changes[0]!.request = {})))).toBe(false);
  });

  it('shows billing of an organisation being joined as known after its accept, before null, and the schema holds it to that', () => {
    const plan = makePlan({ changes: [acceptInvitation('wayne', 'inv_bot'), billingKnownAfterAccept('wayne', 'inv_bot', { billingEmail: 'new@wayne.example' })] });
    const document = JSON.parse(renderJson(plan)) as { changes: Array<Record<string, unknown>> };
    expect(document.changes[1]).toMatchObject({
      kind: 'billing_update',
      before: null,
      after: { billingEmail: 'new@wayne.example' },
      known_after: 'organisations.wayne.invitations.accept.inv_bot',
    });
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    const known = structuredClone(document);
    known.changes[1]!.before = { billingEmail: null };
    expect(validate(known)).toBe(false);
    const stray = structuredClone(document);
    stray.changes[0]!.known_after = 'x';
    expect(validate(stray)).toBe(false);
  });

  it('has a wire string for every change kind and every action, all distinct', () => {
    const kinds = ALL_KINDS.map(wireKind);
    expect(kinds).toEqual(['invitation_accept', 'billing_update', 'invitation_revoke', 'notification_channel_remove', 'active_organisation_set']);
    expect(ALL_ACTIONS.map(wireAction)).toEqual(['accept', 'update', 'delete']);
    expect(new Set(kinds).size).toBe(ALL_KINDS.length);
  });

  it('never shows what apply reads of a change, only what it displays', () => {
    const change = billing('acme', { billingEmail: ['a@x', 'b@x'] });
    change.declared = { ...change.declared, customerID: 'cus-not-for-display' };
    change.seen = { ...change.seen, customerID: 'cus-not-for-display' };
    const text = renderJson(makePlan({ changes: [change] }));
    expect(text).not.toContain('not-for-display');
    expect(text).not.toMatch(/"(declared|seen)"/);
  });

  it('leaves out target_id and note when the change has none', () => {
    const document = JSON.parse(renderJson(makePlan({ changes: [acceptInvitation('acme', 'inv_1'), setActive('acme', 'globex')] }))) as {
      changes: Array<Record<string, unknown>>;
    };
    expect(Object.keys(document.changes[0]!)).toEqual(['address', 'action', 'kind', 'organisation', 'target_id', 'before', 'after']);
    expect(Object.keys(document.changes[1]!)).toEqual(['address', 'action', 'kind', 'organisation', 'before', 'after']);
  });

  it('renders the same plan to the same bytes every time, ending with a newline', () => {
    const text = renderJson(everyKindPlan());
    expect(renderJson(everyKindPlan())).toBe(text);
    expect(text.endsWith('}\n')).toBe(true);
  });
});
