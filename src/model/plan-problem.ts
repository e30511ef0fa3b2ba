/** Why an organisation (or the file as a whole) is left out of a plan: it could not be read, or is not what the file says. */
export interface PlanProblem {
  /** The organisation slug, or null for the file as a whole (activeOrganisation). */
  organisation: string | null;
  address: string;
  message: string;
}
