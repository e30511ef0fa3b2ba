/**
 * The plan's changes grouped by organisation, as apply runs them: one group per organisation for
 * every change but set-active (each group's changes in plan order), and the set-active changes on
 * their own, each waiting for its organisation's group. Indexes into the plan, in typed arrays: an
 * apply of 100,000 changes holds these to the end.
 */
import type { ApplicableChange } from '../plan/types.js';

export interface OrganisationGroups {
  /** The indexes of the changes other than set-active, each organisation's together, in plan order. */
  order: Uint32Array;
  /** Where each group starts in `order`, with the end as the last start: group g is order[starts[g]..starts[g + 1]). */
  starts: Uint32Array;
  /** Each group's organisation (taken now: the changes go as they end). */
  slugs: string[];
  /** The set-active changes, with the organisation each makes active. */
  active: Array<{ index: number; slug: string }>;
}

/** The changes of group `group`, as indexes into the plan. */
export function groupIndexes(groups: OrganisationGroups, group: number): Uint32Array {
  return groups.order.subarray(groups.starts[group]!, groups.starts[group + 1]!);
}

/**
 * Organisations in the order they first appear. A plan is sorted by organisation, so `order` is
 * usually every index in turn; only a plan in another order needs the map.
 */
export function groupByOrganisation(changes: readonly ApplicableChange[]): OrganisationGroups {
  const indexes: number[] = [];
  const active: OrganisationGroups['active'] = [];
  let sorted = true;
  let previous: string | undefined;
  for (let index = 0; index < changes.length; index++) {
    const slug = changes[index]!.organisation.slug;
    if (changes[index]!.kind === 'set-active') {
      active.push({ index, slug });
      continue;
    }
    if (previous !== undefined && slug < previous) sorted = false;
    previous = slug;
    indexes.push(index);
  }
  const order = sorted ? Uint32Array.from(indexes) : Uint32Array.from(togetherByOrganisation(changes, indexes));
  const starts: number[] = [];
  const slugs: string[] = [];
  for (let at = 0; at < order.length; at++) {
    const slug = changes[order[at]!]!.organisation.slug;
    if (at > 0 && slug === slugs.at(-1)) continue;
    starts.push(at);
    slugs.push(slug);
  }
  starts.push(order.length);
  return { order, starts: Uint32Array.from(starts), slugs, active };
}

function togetherByOrganisation(changes: readonly ApplicableChange[], indexes: readonly number[]): number[] {
  const groups = new Map<string, number[]>();
  for (const index of indexes) {
    const slug = changes[index]!.organisation.slug;
    const group = groups.get(slug);
    if (group === undefined) groups.set(slug, [index]);
    else group.push(index);
  }
  return [...groups.values()].flat();
}
