/** Small builders for desired and observed state, plans and apply events, so that each test states only what it is about. */
import type { ApplySummary, ChangeResult } from '../../src/executor/events.js';
import type { BillingDetails, BillingField } from '../../src/model/billing.js';
import type { ChangeKind } from '../../src/model/change-kind.js';
import type { DesiredOrganisation, DesiredState } from '../../src/model/desired-state.js';
import type { ObservedOrganisation } from '../../src/model/observed-organisation.js';
import type { ObservedState } from '../../src/model/observed-state.js';
import type { PlanProblem } from '../../src/model/plan-problem.js';
import { computePlan } from '../../src/plan/compute-plan.js';
import type { FreshObservation } from '../../src/plan/find-stale.js';
import type { Change, Plan } from '../../src/plan/types.js';

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

export function makePlan(parts: Partial<Plan> = {}): Plan {
  return {
    formatVersion: 3,
    baseUrl: BASE_URL,
    changes: [],
    unchanged: [],
    problems: [],
    journaled: [],
    observed: {},
    observedActiveId: null,
    ...parts,
  };
}

const org = (slug: string): Change['organisation'] => ({ slug, id: `org_${slug}` });

/**
 * A billing change showing `fields` (before → after); without any, it declares a billing e-mail the
 * plan saw no value for (`new@SLUG.test`), which is what apply tests write.
 */
export function billing(slug: string, fields: Partial<Record<BillingField, [before: string | null, after: string]>>): Change {
  const shown = Object.entries(fields) as Array<[BillingField, [string | null, string]]>;
  const declared = shown.length > 0 ? Object.fromEntries(shown.map(([field, [, after]]) => [field, after])) : { billingEmail: `new@${slug}.test` };
  const seen = shown.length > 0 ? Object.fromEntries(shown.map(([field, [before]]) => [field, before])) : { billingEmail: null };
  return {
    address: `organisations.${slug}.billing`,
    kind: 'billing',
    action: 'update',
    organisation: org(slug),
    declared,
    seen,
    display: {
      fields: Object.entries(fields).map(([field, [before, after]]) => ({ field: field as BillingField, before, after })),
    },
  };
}

export function acceptInvitation(slug: string, invitation: string): Change {
  return {
    address: `organisations.${slug}.invitations.accept.${invitation}`,
    kind: 'accept-invitation',
    action: 'accept',
    organisation: org(slug),
    targetId: invitation,
    display: {},
  };
}

export function revokeInvitation(slug: string, invitation: string): Change {
  return {
    address: `organisations.${slug}.invitations.revoke.${invitation}`,
    kind: 'revoke-invitation',
    action: 'delete',
    organisation: org(slug),
    targetId: invitation,
    display: { note: 'cannot be checked before apply: the interface cannot list invitations' },
  };
}

export function removeChannel(slug: string, channel: string): Change {
  return {
    address: `organisations.${slug}.notificationChannels.remove.${channel}`,
    kind: 'remove-channel',
    action: 'delete',
    organisation: org(slug),
    targetId: channel,
    display: {},
  };
}

export function setActive(slug: string, fromActive: string | null | undefined): Change {
  return {
    address: 'activeOrganisation',
    kind: 'set-active',
    action: 'update',
    organisation: org(slug),
    display: fromActive === undefined ? {} : { fromActive },
  };
}

export function problem(slug: string, message: string): PlanProblem {
  return { organisation: slug, address: `organisations.${slug}`, message };
}

/** A plan with one change of every kind, a problem, unchanged organisations and a journaled change. */
export function everyKindPlan(): Plan {
  return makePlan({
    changes: [
      billing('acme', { billingEmail: ['old@acme.test', 'new@acme.test'], customerID: [null, 'cus_1'] }),
      acceptInvitation('acme', 'inv_1'),
      revokeInvitation('acme', 'inv_2'),
      removeChannel('globex', 'ch_9'),
      setActive('acme', 'globex'),
    ],
    unchanged: ['hooli', 'initech'],
    problems: [problem('umbrella', 'getOrganisation /organisations/umbrella failed with HTTP 403: forbidden: not a member')],
    journaled: ['organisations.acme.invitations.accept.inv_0'],
  });
}

/** A desired state declaring every organisation `plan` changes (a saved plan declares each one it changes). */
export function desiredFor(plan: Plan): DesiredState {
  return desiredState({ organisations: [...new Set(plan.changes.map((c) => c.organisation.slug))].map((slug) => desiredOrg({ slug })) });
}

/** `n` organisations, each with a billing change, an invitation to accept and one to revoke. */
export function largePlan(n: number): Plan {
  const changes: Change[] = [];
  for (let i = 0; i < n; i += 1) {
    const slug = `org-${String(i).padStart(5, '0')}`;
    changes.push(
      billing(slug, { billingEmail: [`old-${i}@example.test`, `new-${i}@example.test`] }),
      acceptInvitation(slug, `inv_a${i}`),
      revokeInvitation(slug, `inv_r${i}`),
    );
  }
  return makePlan({ changes, unchanged: ['steady'] });
}

export function result(parts: Partial<ChangeResult> & Pick<ChangeResult, 'outcome'>): ChangeResult {
  return { address: 'organisations.acme.billing', organisation: 'acme', kind: 'billing', durationMs: 120, ...parts };
}

/** The organisations with a change applied among these results, as applyPlan counts them. */
function changedIn(results: ChangeResult[]): ApplySummary['changed'] {
  const counts = new Map<string, number>();
  for (const r of results) if (r.outcome === 'applied') counts.set(r.organisation, (counts.get(r.organisation) ?? 0) + 1);
  return { organisations: counts.size, first: [...counts].map(([organisation, applied]) => ({ organisation, applied })) };
}

export function makeSummary(results: ChangeResult[], parts: Partial<ApplySummary> = {}): ApplySummary {
  const count = (o: ChangeResult['outcome']): number => results.filter((r) => r.outcome === o).length;
  return {
    total: results.length,
    applied: count('applied'),
    alreadyDone: count('already-done'),
    skipped: count('skipped'),
    notStarted: count('not-started'),
    stale: count('stale'),
    failed: count('failed'),
    interrupted: false,
    elapsedMs: 12_345,
    notApplied: results.filter((r) => r.outcome !== 'applied'),
    changed: changedIn(results),
    ...parts,
  };
}

/** Billing of an organisation joined by the same apply: its current values are known only after the accept. */
export function billingKnownAfterAccept(slug: string, invitation: string, declared: Partial<Record<BillingField, string>>): Change {
  return {
    address: `organisations.${slug}.billing`,
    kind: 'billing',
    action: 'update',
    organisation: org(slug),
    knownAfter: `organisations.${slug}.invitations.accept.${invitation}`,
    declared,
    display: {
      fields: Object.entries(declared).map(([field, after]) => ({ field: field as BillingField, before: null, after: after as string })),
      note: 'current billing is known once an invitation is accepted: apply reads it then, and fields not declared keep their values',
    },
  };
}
