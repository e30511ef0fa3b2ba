/**
 * A user's organisations sorted by (slug, id), with lower-cased names for filtering and the last
 * few filter results, so that paging through a filtered list of 10,000 does not rescan per page.
 * Built on demand and thrown away by the store whenever memberships or organisations change;
 * an organisation edited in place (rather than put again) is not seen until then.
 */
import type { Organisation } from '../api/types.js';
import { compareKeys, keyOf } from './paginate-organisations.js';

const FILTERS_KEPT = 16;

export class UserListing {
  readonly sorted: readonly Organisation[];
  private readonly slugs: string[];
  private readonly names: string[];
  private readonly filtered = new Map<string, Organisation[]>();

  constructor(members: Organisation[]) {
    this.sorted = members.sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
    this.slugs = this.sorted.map((o) => o.slug.toLowerCase());
    this.names = this.sorted.map((o) => (o.displayName ?? '').toLowerCase());
  }

  /** The organisations whose slug or display name contains `filter` (lower-cased); all for null. */
  matching(filter: string | null): readonly Organisation[] {
    if (filter === null) return this.sorted;
    let found = this.filtered.get(filter);
    if (found) {
      // Refresh its place so that the filters in use stay while old ones age out.
      this.filtered.delete(filter);
    } else {
      found = [];
      for (let i = 0; i < this.sorted.length; i += 1) {
        if ((this.slugs[i] as string).includes(filter) || (this.names[i] as string).includes(filter)) found.push(this.sorted[i] as Organisation);
      }
      if (this.filtered.size >= FILTERS_KEPT) this.filtered.delete(this.filtered.keys().next().value as string);
    }
    this.filtered.set(filter, found);
    return found;
  }
}
