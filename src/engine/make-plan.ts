/**
 * The read and plan steps of plan and apply: the current state of the declared organisations
 * through the client, the journal's record of one-shot changes, and the plan that follows (pure,
 * plan/compute-plan.ts). Never writes to the service.
 */
import type { OrganisationsClient } from '../api/client.js';
import type { DesiredState } from '../config/types.js';
import type { ObservedState } from '../model/observed-state.js';
import { computePlan } from '../plan/compute-plan.js';
import type { Plan } from '../plan/types.js';
import { journalKey, type Journal } from '../state/journal.js';
import { readObservedState } from '../state/read-observed-state.js';

export interface MakePlanOptions {
  client: OrganisationsClient;
  journal: Journal;
  /** The service's base URL as written in plans and the journal. */
  service: string;
  parallelism: number;
}

export async function makePlan(desired: DesiredState, options: MakePlanOptions): Promise<{ plan: Plan; observed: ObservedState }> {
  const observed = await readObservedState(desired, options.client, { parallelism: options.parallelism });
  const plan = computePlan({
    desired,
    observed,
    baseUrl: options.service,
    isJournaled: (kind, organisationId, targetId) => options.journal.has(options.service, journalKey(kind, organisationId, targetId)),
  });
  return { plan, observed };
}
