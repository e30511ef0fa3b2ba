/** The kinds of change orgform makes, and the order they run in within one organisation. */

export type ChangeKind = 'accept-invitation' | 'billing' | 'revoke-invitation' | 'remove-channel' | 'set-active';

/** The order of changes within one organisation: accept first, then billing, revocations, channel removals. */
export const KIND_ORDER: Readonly<Record<ChangeKind, number>> = {
  'accept-invitation': 0,
  billing: 1,
  'revoke-invitation': 2,
  'remove-channel': 3,
  'set-active': 4,
};
