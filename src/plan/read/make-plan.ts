/**
 * The read and plan steps of plan and apply: the current state of the declared organisations
 * through the client, the journal's record of one-shot changes, and the plan that follows (pure,
 * plan/plan-builder.ts). Never writes to the service.
 */
import type { OrganisationsClient } from '../../api/client.js';
import type { DesiredState } from '../../model/desired-state.js';
import type { ObservedState } from '../../model/observed-state.js';
import type { ObservedOrganisation } from '../../model/observed-organisation.js';
import { PlanBuilder } from '../plan-builder.js';
import type { IsJournaled } from '../plan-organisation.js';
import type { Plan } from '../types.js';
import { journalKey } from '../../model/journal-key.js';
import type { JournalReader } from '../../state/state-backend.js';
import { readObservedState } from './read-observed-state.js';

export interface MakePlanOptions {
  client: OrganisationsClient;
  journal: JournalReader;
  /** The service's base URL as written in plans and the journal. */
  serviceKey: string;
  parallelism: number;
  /** The plan is to be saved (`plan --out`): it records the observations its changes depend on, for its apply to compare again. */
  saving?: boolean;
  /** With `saving`: where the observations go as they are planned, rather than into the plan (PlanBuilder's observationSink). */
  observationSink?: (slug: string, observed: ObservedOrganisation) => void;
  /** The organisations (by slug) whose observations to keep in `observed`: a saved plan's apply compares them. None by default. */
  keep?: (slug: string) => boolean;
  /** Plan every one-shot change whatever the journal says: what a saved plan's changes are checked against. */
  ignoreJournal?: boolean;
}

export interface MadePlan {
  plan: Plan;
  /** What was read besides: the active organisation, the problems, the whole listing's size, and the observations kept. */
  observed: ObservedState;
}

export async function makePlan(desired: DesiredState, options: MakePlanOptions): Promise<MadePlan> {
  const isJournaled: IsJournaled =
    options.ignoreJournal === true ? () => false : (kind, organisationId, targetId) => options.journal.has(options.serviceKey, journalKey(kind, organisationId, targetId));
  // Planned as it is read: each observation is let go once its changes are planned.
  const builder = new PlanBuilder({ baseUrl: options.serviceKey, isJournaled, activeSlug: desired.activeOrganisation?.slug, recordObservations: options.saving === true,
    ...(options.observationSink === undefined ? {} : { observationSink: options.observationSink }),
  });
  const keep = options.keep;
  const observed = await readObservedState(desired, options.client, {
    parallelism: options.parallelism,
    onObserved: (d, o) => {
      builder.add(d, o);
      return keep !== undefined && keep(d.slug);
    },
  });
  return { plan: builder.finish(observed), observed };
}
