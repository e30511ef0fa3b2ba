/**
 * The desired state: what orgs.yaml declares, after defaults are merged and `${VAR}`s are
 * interpolated. schemas/orgs.schema.json is the source of truth for the file format; this is
 * the loaded, normalised form that plan works from.
 */
import type { BillingDetails } from './billing.js';

/** The format version this orgform reads: every orgs file starts with `version: 1`. */
export const SUPPORTED_VERSION = 1;

export interface SourcePosition {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  col: number;
}

export interface DesiredOrganisation {
  /** The key under `organisations:`. */
  slug: string;
  id?: string;
  /** Declared billing fields only (defaults merged under the organisation's own values). */
  billing?: BillingDetails;
  invitations: { readonly accept: readonly string[]; readonly revoke: readonly string[] };
  notificationChannels: { readonly remove: readonly string[] };
  /** Where the organisation's key stands, for messages that name it. */
  source: SourcePosition;
}

export interface DesiredState {
  version: 1;
  activeOrganisation?: { slug: string; source: SourcePosition };
  /** Sorted by slug. */
  organisations: DesiredOrganisation[];
  /** Every file read, in the order read, with the SHA-256 of its bytes (saved plans pin these). */
  files: Array<{ path: string; sha256: string }>;
}
