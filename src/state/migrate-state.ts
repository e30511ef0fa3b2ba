/**
 * `orgform state migrate --to URL`: copies every entry of one state into another, then reads the
 * target back afresh and checks that it holds them all. Both are locked meanwhile, so that no
 * apply records into either half way; the source is only read, and left as it was.
 */
import { OrgformError } from '../errors.js';
import type { JournalData, JournalEntry } from './journal.js';
import type { StateBackend } from './state-backend.js';

export interface MigrateResult {
  /** Entries written to the target. */
  copied: number;
  /** Entries the target already had (kept as they were). */
  present: number;
  /** The source's entries, all of which the target now holds. */
  total: number;
}

const COMMAND = 'orgform state migrate';

export async function migrateState(source: StateBackend, target: StateBackend, readTargetAfresh: () => Promise<JournalData>): Promise<MigrateResult> {
  const from = await source.lock(COMMAND);
  let result: MigrateResult;
  /** Entries the target had already: kept as they were, whatever the source says. */
  const kept = new Set<string>();
  try {
    const to = await target.lock(COMMAND);
    let lost: OrgformError | undefined;
    to.onLost((error) => {
      lost = error;
    });
    result = { copied: 0, present: 0, total: 0 };
    try {
      // Recorded together: a file target writes them in one go, a remote one in batches.
      const writes: Array<Promise<void>> = [];
      for (const [serviceKey, entries] of Object.entries(from.data.services)) {
        for (const [key, entry] of Object.entries(entries)) {
          result.total += 1;
          if (to.journal.has(serviceKey, key)) {
            result.present += 1;
            kept.add(`${serviceKey}\n${key}`);
            continue;
          }
          result.copied += 1;
          // As it was: an entry recorded before orgform recorded runs is not stamped with this copy's.
          writes.push(to.journal.record(serviceKey, key, { ...entry, run: entry.run }));
        }
      }
      await Promise.all(writes);
      await to.journal.flush();
      if (lost !== undefined) throw lost;
    } finally {
      await to.release();
    }

    // Verify: what the target holds now, read back through a connection of its own.
    const copy = await readTargetAfresh();
    const missing: string[] = [];
    for (const [serviceKey, entries] of Object.entries(from.data.services)) {
      for (const [key, entry] of Object.entries(entries)) {
        const there = copy.services[serviceKey]?.[key];
        if (there === undefined || (!kept.has(`${serviceKey}\n${key}`) && !sameEntry(entry, there))) missing.push(`${serviceKey} ${key}`);
      }
    }
    if (missing.length > 0) {
      throw new OrgformError(
        'STATE_INVALID',
        `The copy at ${target.location} does not hold ${missing.length} of the ${result.total} entries of ${source.location}; the source is unchanged. Run orgform state migrate again.`,
        { details: missing.slice(0, 20) },
      );
    }
  } finally {
    await from.release();
  }
  return result;
}

function sameEntry(a: JournalEntry, b: JournalEntry): boolean {
  return a.kind === b.kind && a.organisation === b.organisation && a.outcome === b.outcome && Date.parse(a.at) === Date.parse(b.at) && a.run === b.run;
}
