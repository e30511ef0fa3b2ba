/**
 * Stable change addresses: `organisations.acme.billing`, `organisations.acme.invitations.revoke.inv_2`,
 * `activeOrganisation`. A segment that is not a plain name is quoted, so that every address is
 * unambiguous whatever the slug or id holds.
 */
import type { ChangeKind } from './change-kind.js';

export function addressSegment(value: string): string {
  return /^[A-Za-z0-9_-]+$/.test(value) ? `.${value}` : `[${JSON.stringify(value)}]`;
}

/** The address that stands for all of one organisation's changes. */
export function organisationAddress(slug: string): string {
  return ['organisations', addressSegment(slug)].join('');
}

export function changeAddress(kind: ChangeKind, slug: string, targetId?: string): string {
  const org = organisationAddress(slug);
  const target = targetId === undefined ? '' : addressSegment(targetId);
  // Joined, not concatenated: V8 keeps a concatenation as a tree of its parts (three objects
  // instead of one, about 5 MB over a plan of 100,000 changes).
  switch (kind) {
    case 'accept-invitation':
      return [org, '.invitations.accept', target].join('');
    case 'billing':
      return [org, '.billing'].join('');
    case 'revoke-invitation':
      return [org, '.invitations.revoke', target].join('');
    case 'remove-channel':
      return [org, '.notificationChannels.remove', target].join('');
    case 'set-active':
      return 'activeOrganisation';
    default: {
      const unreachable: never = kind;
      throw new Error(`unknown change kind ${String(unreachable)}`);
    }
  }
}
