/**
 * Wire types of the Organisations interface (described here by schemas/organisations.openapi.yaml).
 * Responses are read tolerantly: every field but the ones orgform relies on (an organisation's `id`
 * and `slug`) may be missing, and unknown fields are kept
 * but never relied on. The model's billing (src/model/billing.ts) is mapped to and from these
 * spellings here, at the edge: toBillingUpdate below, observeBilling in observe-billing.ts.
 */
import { BILLING_FIELDS, type BillingDetails, type BillingField } from '../model/billing.js';

export type OperationId =
  | 'getOrganisations'
  | 'getOrganisation'
  | 'setActiveOrganisation'
  | 'updateBillingDetails'
  | 'getSlugAvailability'
  | 'acceptInvitation'
  | 'deleteInvitation'
  | 'deleteNotificationChannel';

export const OPERATION_IDS: readonly OperationId[] = [
  'getOrganisations',
  'getOrganisation',
  'setActiveOrganisation',
  'updateBillingDetails',
  'getSlugAvailability',
  'acceptInvitation',
  'deleteInvitation',
  'deleteNotificationChannel',
];

export interface Subscription {
  id?: string;
  status?: string;
  rawData?: unknown;
}

/** Billing as the service returns it (response spelling: customerId, subscriptionId, platformId). */
export interface Billing {
  platformId?: string;
  customerId?: string;
  billingEmail?: string;
  isSubscriptionActive?: number;
  billingPeriodStart?: string;
  billingPeriodEnd?: string;
  platformType?: string;
  subscriptionId?: string;
  recentSubscriptions?: Subscription[];
  hasMoreSubscriptions?: boolean;
  freeTrialEndDate?: string;
  isBespoke?: boolean;
  boardQuota?: number;
  hubBoardQuota?: number;
}

export interface Organisation {
  id: string;
  slug: string;
  displayName?: string;
  owner?: string;
  billing?: Billing;
  systemServiceAccountClientID?: string;
  plan?: string;
}

export interface OrganisationList {
  totalCount?: number;
  next?: string;
  prev?: string;
  organisations: Organisation[];
}

/** Request body of UpdateBillingDetails (request spelling: customerID, subscriptionID, platformID). */
export interface BillingUpdate {
  billingEmail?: string;
  customerID?: string;
  subscriptionID?: string;
  platformID?: string;
}

export const BILLING_UPDATE_FIELDS = ['billingEmail', 'customerID', 'subscriptionID', 'platformID'] as const;
export type BillingUpdateField = (typeof BILLING_UPDATE_FIELDS)[number];

/** Each billing field of the model as a response spells it (Billing: customerId, subscriptionId, platformId). */
export const BILLING_RESPONSE_FIELD: Readonly<Record<BillingField, keyof Billing>> = {
  billingEmail: 'billingEmail',
  customerID: 'customerId',
  subscriptionID: 'subscriptionId',
  platformID: 'platformId',
};

/**
 * The request body that sets these billing details, in the canonical field order. The model took
 * the request's spelling (as orgs.yaml does), so a field is its own key; the type check below says so.
 */
export function toBillingUpdate(details: BillingDetails): BillingUpdate {
  const body: BillingUpdate = {};
  for (const field of BILLING_FIELDS satisfies readonly BillingUpdateField[]) {
    const value = details[field];
    if (value !== undefined) body[field] = value;
  }
  return body;
}

export interface SlugAvailability {
  ok: boolean;
  messages: string[];
}

export interface ErrorBody {
  code: string;
  message: string;
  cause?: string;
}
