/** What the service holds for the declared organisations: what state reads, and what plan compares the desired state with. */
import type { ObservedOrganisation } from './observed-organisation.js';
import type { PlanProblem } from './plan-problem.js';

export interface ObservedState {
  /** Observed organisations by declared slug; missing where a problem was recorded instead. */
  organisations: Map<string, ObservedOrganisation>;
  /** The active organisation's id (first item of the first unfiltered page), null when it was not read. */
  activeId: string | null;
  /** Slug of every organisation seen in the listing, by id, to show the current active one by name. */
  slugsById: Map<string, string>;
  problems: PlanProblem[];
}
