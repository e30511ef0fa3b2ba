/** Small builders for desired and observed state, so that each test states only what it is about. */
import type { DesiredOrganisation, DesiredState } from '../../src/model/desired-state.js';
import type { BillingDetails, BillingField } from '../../src/model/billing.js';
import type { ChangeKind } from '../../src/model/change-kind.js';
import type { ObservedOrganisation } from '../../src/model/observed-organisation.js';
import type { ObservedState } from '../../src/model/observed-state.js';
import type { PlanProblem } from '../../src/model/plan-problem.js';
import { computePlan } from '../../src/plan/compute-plan.js';
import type { FreshObservation } from '../../src/plan/find-stale.js';
import type { Plan } from '../../src/plan/types.js';

export const BASE_URL = 'https://orgs.example.test';

export function desiredOrg(parts: {
  slug: string;
  id?: string;
  billing?: BillingDetails;
  accept?: string[];
  revoke?: string[];
  removeChannels?: string[];
}): DesiredOrganisation {
  return {
    slug: parts.slug,
    ...(parts.id === undefined ? {} : { id: parts.id }),
    ...(parts.billing === undefined ? {} : { billing: parts.billing }),
    invitations: { accept: parts.accept ?? [], revoke: parts.revoke ?? [] },
    notificationChannels: { remove: parts.removeChannels ?? [] },
    source: { file: 'orgs.yaml', line: 1, col: 1 },
  };
}

export function desiredState(parts: { organisations?: DesiredOrganisation[]; activeOrganisation?: string; files?: DesiredState['files'] } = {}): DesiredState {
  return {
    version: 1,
    ...(parts.activeOrganisation === undefined ? {} : { activeOrganisation: { slug: parts.activeOrganisation, source: { file: 'orgs.yaml', line: 1, col: 1 } } }),
    organisations: parts.organisations ?? [],
    files: parts.files ?? [{ path: 'orgs.yaml', sha256: 'a'.repeat(64) }],
  };
}

/** Billing as observed (request spelling); fields left out are absent (null). `null` for no billing at all. */
export function billingRecord(fields: Partial<Record<BillingField, string | null>>): Record<BillingField, string | null> {
  return { billingEmail: null, customerID: null, subscriptionID: null, platformID: null, ...fields };
}

export function observedOrg(parts: {
  slug: string;
  id?: string;
  member?: boolean;
  billing?: Partial<Record<BillingField, string | null>> | null;
}): ObservedOrganisation {
  return {
    slug: parts.slug,
    id: parts.id ?? `org_${parts.slug}`,
    member: parts.member ?? true,
    billing: parts.billing === undefined || parts.billing === null ? null : billingRecord(parts.billing),
  };
}

export function observedState(
  parts: { organisations?: ObservedOrganisation[]; activeId?: string | null; listed?: Record<string, string>; problems?: PlanProblem[] } = {},
): ObservedState {
  const organisations = parts.organisations ?? [];
  const slugsById = new Map<string, string>();
  for (const o of organisations) if (o.member) slugsById.set(o.id, o.slug);
  for (const [id, slug] of Object.entries(parts.listed ?? {})) slugsById.set(id, slug);
  return {
    organisations: new Map(organisations.map((o) => [o.slug, o])),
    activeId: parts.activeId ?? null,
    slugsById,
    problems: parts.problems ?? [],
  };
}

export function problemFor(slug: string, message: string): PlanProblem {
  return { organisation: slug, address: `organisations.${slug}`, message };
}

/** The plan for a desired and an observed state; `journaled` lists `kind orgId targetId` keys recorded as done. */
export function planFor(desired: DesiredState, observed: ObservedState, journaled: string[] = []): Plan {
  const done = new Set(journaled);
  return computePlan({
    desired,
    observed,
    baseUrl: BASE_URL,
    isJournaled: (kind: ChangeKind, organisationId: string, targetId: string) => done.has(`${kind} ${organisationId} ${targetId}`),
  });
}

/** What apply reads afresh, as findStale takes it. */
export function freshFrom(
  observed: ObservedState,
  parts: { fileHashes?: Record<string, string | null>; baseUrl?: string } = {},
): FreshObservation {
  return {
    organisations: observed.organisations,
    activeId: observed.activeId,
    problems: observed.problems,
    fileHashes: new Map(Object.entries(parts.fileHashes ?? { 'orgs.yaml': 'a'.repeat(64) })),
    baseUrl: parts.baseUrl ?? BASE_URL,
  };
}
