/**
 * The difference between the desired state and what was observed, as a plan. Pure: data in,
 * data out, deterministically sorted. The read step builds the same plan as it reads
 * (plan/read/make-plan.ts), with the same builder.
 */
import type { DesiredState } from '../model/desired-state.js';
import type { ObservedState } from '../model/observed-state.js';
import { PlanBuilder } from './plan-builder.js';
import type { IsJournaled } from './plan-organisation.js';
import type { Plan } from './types.js';

export interface ComputePlanInputs {
  desired: DesiredState;
  observed: ObservedState;
  baseUrl: string;
  isJournaled: IsJournaled;
}

export function computePlan(inputs: ComputePlanInputs): Plan {
  const { desired, observed } = inputs;
  const builder = new PlanBuilder({ baseUrl: inputs.baseUrl, isJournaled: inputs.isJournaled, activeSlug: desired.activeOrganisation?.slug, recordObservations: true });
  for (const d of desired.organisations) {
    const o = observed.organisations.get(d.slug);
    if (o !== undefined) builder.add(d, o); // otherwise a problem was recorded for it
  }
  return builder.finish(observed);
}
