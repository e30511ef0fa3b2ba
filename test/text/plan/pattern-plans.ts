/**
 * Generated plans for the grouped views: `n` changes made of a few patterns (a bulk move, as a
 * reviewer meets it) or of nothing but single changes (every one different), deterministic.
 */
import type { Change, Plan } from '../../../src/plan/types.js';
import { acceptInvitation, billing, makePlan, removeChannel, revokeInvitation } from '../../support/plan-fixtures.js';

const slug = (i: number) => `org-${String(i).padStart(6, '0')}`;

/**
 * `n` changes in five patterns, one organisation each: three platformID moves, one customerID set
 * from nothing, and one invitation revoked everywhere (the same id, as a bot's invitation would be).
 */
export function fivePatternPlan(n: number): Plan {
  const changes: Change[] = [];
  for (let i = 0; i < n; i++) {
    const s = slug(i);
    switch (i % 5) {
      case 0:
      case 1:
      case 2:
        changes.push(billing(s, { platformID: ['plat_legacy', `plat_bulk_${(i % 5) + 1}`] }));
        break;
      case 3:
        changes.push(billing(s, { customerID: [null, 'cus_shared'] }));
        break;
      default:
        changes.push(revokeInvitation(s, 'inv_onboarding_bot'));
    }
  }
  return makePlan({ changes });
}

/** `n` organisations each with a change of its own: a billing e-mail, an invitation to accept, a channel to remove. */
export function singlesPlan(n: number): Plan {
  const changes: Change[] = [];
  for (let i = 0; i < n; i++) {
    const s = slug(i);
    if (i % 3 === 0) changes.push(billing(s, { billingEmail: [`old-${i}@example.test`, `new-${i}@example.test`] }));
    else if (i % 3 === 1) changes.push(acceptInvitation(s, `inv_${i}`));
    else changes.push(removeChannel(s, `chn_${i}`));
  }
  return makePlan({ changes });
}
