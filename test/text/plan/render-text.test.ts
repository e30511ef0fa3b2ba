import { describe, expect, it } from 'vitest';
import { renderText, renderTextPieces } from '../../../src/text/plan/render-text.js';
import { billing, billingKnownAfterAccept, everyKindPlan, makePlan, problem, revokeInvitation, setActive } from '../../support/plan-fixtures.js';

const plain = { color: false };

describe('renderText', () => {
  it('shows every kind of change in Terraform style, then problems, counts and the plan line', () => {
    expect(renderText(everyKindPlan(), plain)).toMatchInlineSnapshot(`
      "orgform plan for https://orgs.example.test

      orgform will perform the following actions:
        + accept   ~ update   - delete

        # acme (org_acme)
        ~ organisations.acme.billing
            billingEmail: "old@acme.test" → "new@acme.test"
            customerID: (none) → "cus_1"
        + organisations.acme.invitations.accept.inv_1
        - organisations.acme.invitations.revoke.inv_2
            note: cannot be checked before apply: the interface cannot list invitations

        # globex (org_globex)
        - organisations.globex.notificationChannels.remove.ch_9

        ~ activeOrganisation: globex → acme

      Problems (1): their changes are missing from this plan
        ! umbrella: getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member

      2 organisations unchanged.
      1 one-shot change already done according to the journal, not planned again.

      Plan digest: sha256:326ea549468163654b510d6dd2c8228ff1ff98db678ac5a1e382979efabd39f5
      Plan: 2 to change, 2 to remove, 1 to accept.
      "
    `);
  });

  it('shows the current billing of an organisation being joined as known after accept, never as (none)', () => {
    const text = renderText(makePlan({ changes: [billingKnownAfterAccept('wayne', 'inv_bot', { billingEmail: 'new@wayne.example' })] }), { color: false });
    expect(text).toContain('billingEmail: (known after accept) → "new@wayne.example"');
    expect(text).not.toContain('(none)');
  });

  it('says there is nothing to do when nothing differs', () => {
    expect(renderText(makePlan({ unchanged: ['acme', 'globex'] }), plain)).toMatchInlineSnapshot(`
      "orgform plan for https://orgs.example.test

      2 organisations unchanged.

      No changes. Your organisations match the configuration.
      "
    `);
  });

  it('does not claim everything matches when some organisations could not be read', () => {
    const text = renderText(makePlan({ problems: [problem('acme', 'HTTP 500 internal: boom')] }), plain);
    expect(text).not.toContain('match the configuration');
    expect(text.trimEnd().split('\n').at(-1)).toBe('No changes. 1 problem (see above): what could not be read was not compared.');
  });

  it('ends with the exact plan line counted by summarisePlan', () => {
    const text = renderText(makePlan({ changes: [billing('a', { billingEmail: ['x', 'y'] }), revokeInvitation('a', 'i1')] }), plain);
    expect(text.trimEnd().split('\n').at(-1)).toBe('Plan: 1 to change, 1 to remove, 0 to accept.');
  });

  it('shows an unknown previous active organisation as (unknown) and none as (none)', () => {
    expect(renderText(makePlan({ changes: [setActive('acme', undefined)] }), plain)).toContain('~ activeOrganisation: (unknown) → acme');
    expect(renderText(makePlan({ changes: [setActive('acme', null)] }), plain)).toContain('~ activeOrganisation: (none) → acme');
  });

  it('uses no escape codes without colour', () => {
    expect(renderText(everyKindPlan(), plain)).not.toMatch(/\u001b/);
  });

  it('paints + green, ~ yellow, - red and headers bold with colour', () => {
    const text = renderText(everyKindPlan(), { color: true });
    expect(text).toContain('\u001b[32m+\u001b[39m organisations.acme.invitations.accept.inv_1');
    expect(text).toContain('\u001b[33m~\u001b[39m organisations.acme.billing');
    expect(text).toContain('\u001b[31m-\u001b[39m organisations.acme.invitations.revoke.inv_2');
    expect(text).toContain('\u001b[1mPlan: 2 to change, 2 to remove, 1 to accept.\u001b[22m');
  });

  it('keeps escape sequences and newlines in values and messages from reaching the terminal', () => {
    const plan = makePlan({
      changes: [billing('acme', { billingEmail: [null, 'evil\u001b[2J\u009b@x'] })],
      problems: [problem('globex', 'boom\nPlan: 0 to change\u001b]0;title\u0007')],
    });
    const text = renderText(plan, { color: false });
    expect(text).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(text).toContain('"evil\\u001b[2J\\u009B@x" (contains invisible characters)');
    expect(text).toContain('boom\\nPlan: 0 to change');
  });

  it('shows invisible and bidirectional characters escaped and marks the value: a change of one such character does not look like no change', () => {
    const plan = makePlan({
      changes: [billing('acme', { subscriptionID: ['sub_acme', 'sub\u200b_acme'] }), setActive('acme', 'evil\u202Egnp.exe')],
      problems: [problem('globex', 'the service says "x\u2066y"')],
    });
    const text = renderText(plan, { color: false });
    expect(text).not.toMatch(/[\u200B\u202E\u2066]/);
    expect(text).toContain('      subscriptionID: "sub_acme" → "sub\\u200B_acme" (contains invisible characters)\n');
    expect(text).toContain('~ activeOrganisation: evil\\u202Egnp.exe (contains invisible characters) → acme\n');
    expect(text).toContain('the service says "x\\u2066y"');
  });

  it('renders the same plan to the same bytes every time', () => {
    expect(renderText(everyKindPlan(), { color: true })).toBe(renderText(everyKindPlan(), { color: true }));
  });

  it('comes in pieces of whole lines that together are the whole text, so that a large plan is written as it is rendered', () => {
    const changes = Array.from({ length: 5_000 }, (_, i) => billing(`org-${String(i).padStart(5, '0')}`, { billingEmail: ['old@x.test', `new${i}@x.test`] }));
    const plan = makePlan({ changes });
    const pieces = [...renderTextPieces(plan, plain)];
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.every((piece) => piece.endsWith('\n'))).toBe(true);
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThan(renderText(plan, plain).length / 2);
    expect(pieces.join('')).toBe(renderText(plan, plain));
  });
});
