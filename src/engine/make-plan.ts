/**
 * The read and plan steps of plan and apply: the current state of the declared organisations
 * through the client, the journal's record of one-shot changes, and the plan that follows (pure,
 * plan/compute-plan.ts). Never writes to the service.
 */
import type { OrganisationsClient } from '../api/client.js';
import type { DesiredOrganisation, DesiredState } from '../config/types.js';
import type { ObservedOrganisation } from '../model/observed-organisation.js';
import type { ObservedState } from '../model/observed-state.js';
import { computePlan, planOrganisation, type PlanInputs } from '../plan/compute-plan.js';
import type { Plan } from '../plan/types.js';
import { journalKey, type Journal } from '../state/journal.js';
import { readObservedState } from '../state/read-observed-state.js';

export interface MakePlanOptions {
  client: OrganisationsClient;
  journal: Journal;
  /** The service's base URL as written in plans and the journal. */
  service: string;
  parallelism: number;
  /** Keep the observation of every organisation, not only of those that need a change (a saved plan's staleness check compares them all). */
  keepEveryObservation?: boolean;
}

export async function makePlan(desired: DesiredState, options: MakePlanOptions): Promise<{ plan: Plan; observed: ObservedState }> {
  const isJournaled: PlanInputs['isJournaled'] = (kind, organisationId, targetId) => options.journal.has(options.service, journalKey(kind, organisationId, targetId));
  // What needs nothing is let go as it is read: its observation would only be compared and dropped
  // (the organisation to make active is kept, for its id).
  const activeSlug = desired.activeOrganisation?.slug;
  const keep = (d: DesiredOrganisation, o: ObservedOrganisation): boolean => {
    if (d.slug === activeSlug) return true;
    const planned = planOrganisation(d, o, isJournaled);
    return planned.changes.length > 0 || planned.journaled.length > 0;
  };
  const observed = await readObservedState(desired, options.client, { parallelism: options.parallelism, ...(options.keepEveryObservation ? {} : { keep }) });
  const plan = computePlan({ desired, observed, baseUrl: options.service, isJournaled });
  return { plan, observed };
}
