/**
 * Whether a saved plan still describes the service: every observed value a change depends on is
 * compared with a fresh read. Pure; the reasons name exactly what changed.
 */
import { organisationAddress } from '../model/address.js';
import { BILLING_FIELDS } from '../model/billing.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { PlanProblem } from '../model/plan-problem.js';
import type { Plan } from './types.js';

export interface FreshObservation {
  organisations: ReadonlyMap<string, ObservedOrganisation>;
  activeId: string | null;
  problems: readonly PlanProblem[];
  /** SHA-256 of each config file now, or null when it cannot be read. */
  fileHashes: ReadonlyMap<string, string | null>;
  baseUrl: string;
}

const show = (v: string | null | undefined) => (v === null || v === undefined ? '(none)' : JSON.stringify(v));

export function findStale(plan: Plan, configFiles: ReadonlyArray<{ path: string; sha256: string }>, fresh: FreshObservation): string[] {
  const reasons: string[] = [];
  if (fresh.baseUrl !== plan.baseUrl) {
    reasons.push(`the plan was made for ${plan.baseUrl}, not ${fresh.baseUrl}`);
    return reasons;
  }
  for (const file of configFiles) {
    const now = fresh.fileHashes.get(file.path);
    if (now === null || now === undefined) reasons.push(`config file ${file.path} cannot be read now`);
    else if (now !== file.sha256) reasons.push(`config file ${file.path} changed since the plan`);
  }
  for (const [slug, before] of Object.entries(plan.observed)) {
    const address = organisationAddress(slug);
    const after = fresh.organisations.get(slug);
    if (after === undefined) {
      const why = fresh.problems.find((p) => p.organisation === slug)?.message ?? 'it cannot be read now';
      reasons.push(`${address}: ${why}`);
      continue;
    }
    if (after.id !== before.id) reasons.push(`${address}: id changed from ${show(before.id)} to ${show(after.id)}`);
    if (after.member !== before.member) reasons.push(`${address}: membership changed (${before.member ? 'member' : 'not a member'} → ${after.member ? 'member' : 'not a member'})`);
    for (const field of BILLING_FIELDS) {
      const b = before.billing?.[field] ?? null;
      const a = after.billing?.[field] ?? null;
      if (a !== b) reasons.push(`${address}.billing.${field} changed from ${show(b)} to ${show(a)}`);
    }
  }
  if (plan.changes.some((c) => c.kind === 'set-active') && fresh.activeId !== plan.observedActiveId) {
    reasons.push(`activeOrganisation: the active organisation changed from ${show(plan.observedActiveId)} to ${show(fresh.activeId)}`);
  }
  return reasons;
}
