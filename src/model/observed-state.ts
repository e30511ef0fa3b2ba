/** What the service holds for the declared organisations: what state reads, and what plan compares the desired state with. */
import type { ObservedOrganisation } from './observed-organisation.js';
import type { PlanProblem } from './plan-problem.js';

export interface ObservedState {
  /**
   * Observed organisations by declared slug; missing where a problem was recorded instead, or where
   * the reader was told not to keep it (the plan takes each one as it is read: see readObservedState).
   */
  organisations: Map<string, ObservedOrganisation>;
  /** The active organisation's id (first item of the first unfiltered page), null when it was not read. */
  activeId: string | null;
  /**
   * Slugs by id of the organisations a plan may name by id: the active one now (to show it by name),
   * the one declared active (once read), and those read by id. Not every listed one: at 100,000 organisations
   * that is 7 MB the plan never looks at.
   */
  slugsById: Map<string, string>;
  problems: PlanProblem[];
  /** How many organisations the whole listing held, when it was read (apply weighs reading it again against reads by id). */
  listed?: number;
}
