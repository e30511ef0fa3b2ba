/** One declared organisation as the service holds it: what a change is based on, and what a saved plan checks again. */
import type { BillingValues } from './billing.js';

export interface ObservedOrganisation {
  slug: string;
  id: string;
  /** Whether the user is a member (readable through the listing or GetOrganisation). */
  member: boolean;
  /** The billing orgform manages; null when it could not be read: unknown, not empty. */
  billing: BillingValues | null;
}
