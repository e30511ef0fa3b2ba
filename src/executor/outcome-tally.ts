/**
 * How each change of an apply ended, kept small: a code per change, and the result of each one not
 * applied (an applied change is told as it ends, and counted; 100,000 records of them would be held
 * to the end). The summary is made from these.
 */
import { CHANGED_LISTED, type ApplySummary, type ChangeResult, type Outcome } from './events.js';
import type { OrganisationGroups } from './organisation-groups.js';

/** Outcomes as the codes kept per change (0: not ended yet). */
const OUTCOMES: readonly Outcome[] = ['applied', 'already-done', 'skipped', 'not-started', 'stale', 'failed'];
const APPLIED = 1 + OUTCOMES.indexOf('applied');

export class OutcomeTally {
  /** By the change's index in the plan. */
  private readonly outcomes: Uint8Array;
  private readonly notApplied = new Map<number, ChangeResult>();

  constructor(total: number) {
    this.outcomes = new Uint8Array(total);
  }

  /** Counts how change `index` ended. */
  add(index: number, result: ChangeResult): void {
    this.outcomes[index] = 1 + OUTCOMES.indexOf(result.outcome);
    if (result.outcome !== 'applied') this.notApplied.set(index, result);
  }

  summary(groups: OrganisationGroups, interrupted: boolean, elapsedMs: number): ApplySummary {
    const notApplied = [...this.notApplied.keys()].sort((a, b) => a - b).map((index) => this.notApplied.get(index)!);
    return { total: this.outcomes.length, ...this.counts(), interrupted, elapsedMs, notApplied, changed: this.changed(groups) };
  }

  private counts(): Pick<ApplySummary, 'applied' | 'alreadyDone' | 'skipped' | 'notStarted' | 'stale' | 'failed'> {
    const counts = new Array<number>(OUTCOMES.length + 1).fill(0);
    for (const code of this.outcomes) counts[code]! += 1;
    // By code: 0 (not ended), then OUTCOMES in order.
    const [, applied, alreadyDone, skipped, notStarted, stale, failed] = counts as [number, number, number, number, number, number, number];
    return { applied, alreadyDone, skipped, notStarted, stale, failed };
  }

  /**
   * The organisations with a change applied, in plan order (the groups, then set-active changes,
   * which count for their organisation): how many, and the first CHANGED_LISTED with their counts.
   */
  private changed({ order, starts, slugs, active }: OrganisationGroups): ApplySummary['changed'] {
    const first: ApplySummary['changed']['first'] = [];
    let organisations = 0;
    const name = (applied: number, slug: string) => {
      organisations += 1;
      const entry = { organisation: slug, applied };
      if (first.length < CHANGED_LISTED) first.push(entry);
      return entry;
    };
    // Only the organisations of set-active changes can be met twice.
    const activeSlugs = new Set(active.map((a) => a.slug));
    const met = new Map<string, { applied: number }>();
    for (let group = 0; group + 1 < starts.length; group++) {
      let applied = 0;
      for (let at = starts[group]!; at < starts[group + 1]!; at++) if (this.outcomes[order[at]!] === APPLIED) applied += 1;
      if (applied === 0) continue;
      const slug = slugs[group]!;
      const entry = name(applied, slug);
      if (activeSlugs.has(slug)) met.set(slug, entry);
    }
    for (const { index, slug } of active) {
      if (this.outcomes[index] !== APPLIED) continue;
      const entry = met.get(slug);
      if (entry) entry.applied += 1;
      else met.set(slug, name(1, slug));
    }
    return { organisations, first };
  }
}
