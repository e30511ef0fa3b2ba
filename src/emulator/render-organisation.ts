/**
 * How an organisation is written in an answer, per the open points that change its rendering:
 * `extra-fields` (unknown fields added), `read-spelling` (billing ids spelled like BillingUpdate)
 * and `listing-billing` (billing left out of listings). The store's own record never changes.
 */
import { BILLING_RESPONSE_FIELD, BILLING_UPDATE_FIELDS, type Organisation } from '../api/types.js';
import type { Behaviour } from './behaviour.js';

/** Fields a service might add that the interface does not show. */
export const EXTRA_ORGANISATION_FIELDS = { createdAt: '2021-03-04T05:06:07Z', region: 'eu-west-1' } as const;
export const EXTRA_BILLING_FIELDS = { taxId: null, currency: 'EUR' } as const;

const UPDATE_SPELLING: ReadonlyMap<string, string> = new Map(
  BILLING_UPDATE_FIELDS.map((field) => [BILLING_RESPONSE_FIELD[field] as string, field as string]),
);

/** The organisation as an answer carries it: the record itself when every point is at its lenient value. */
export function renderOrganisation(org: Organisation, behaviour: Readonly<Behaviour>, where: 'read' | 'listing'): unknown {
  const extra = behaviour['extra-fields'] === 'on';
  const spellUpdate = behaviour['read-spelling'] === 'update';
  const dropBilling = where === 'listing' && behaviour['listing-billing'] === 'omitted';
  if (!extra && !spellUpdate && !dropBilling) return org;
  const out: Record<string, unknown> = { ...org };
  if (dropBilling) delete out.billing;
  else if (org.billing !== undefined) {
    let billing: Record<string, unknown> = { ...org.billing };
    if (spellUpdate) {
      // Renamed in place, so the order of the fields stays as the record has it.
      billing = Object.fromEntries(Object.entries(billing).map(([key, value]) => [UPDATE_SPELLING.get(key) ?? key, value]));
    }
    if (extra) Object.assign(billing, EXTRA_BILLING_FIELDS);
    out.billing = billing;
  }
  if (extra) Object.assign(out, EXTRA_ORGANISATION_FIELDS);
  return out;
}
