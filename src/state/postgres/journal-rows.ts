/**
 * The journal's rows: one per entry, keyed by (state, service, key), so that inserting an entry
 * twice changes nothing and the first recorded stays. Each row also holds its `target` (the
 * change's kind and target, postgres-schema.ts), which is what a plan asks about.
 */
import type { JournalEntry } from '../journal-entry.js';
import { targetOfKey } from './postgres-schema.js';
import { tableOf, type PostgresSession } from './postgres-session.js';

export interface JournalRow {
  service: string;
  key: string;
  entry: JournalEntry;
}

/** Rows fetched at a time when every entry is read: what a reader holds at once, whatever the state's size. */
export const FETCH_ROWS = 5_000;

/** Inserts a batch in one statement (its own transaction: committed when it returns). */
export async function insertRows(session: PostgresSession, rows: readonly JournalRow[]): Promise<void> {
  const column = <T>(pick: (row: JournalRow) => T) => rows.map(pick);
  await session.query(
    `INSERT INTO ${tableOf(session.place, 'journal')} (state, service, key, kind, organisation, outcome, at, run, target)
     SELECT $1, s, k, kind, organisation, outcome, at, run, ${targetOfKey('k')}
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[]) AS r(s, k, kind, organisation, outcome, at, run)
     ON CONFLICT (state, service, key) DO NOTHING`,
    [
      session.place.name,
      column((row) => row.service),
      column((row) => row.key),
      column((row) => row.entry.kind),
      column((row) => row.entry.organisation),
      column((row) => row.entry.outcome),
      column((row) => row.entry.at),
      column((row) => row.entry.run ?? null),
    ],
  );
}

/**
 * The (service, key) of every entry whose target is one of `targets`: one statement, one snapshot.
 * On a version-1 schema (no target column yet) the target is worked out from the key.
 */
export async function selectKeysOf(session: PostgresSession, targets: readonly string[], schemaVersion: number): Promise<Array<{ service: string; key: string }>> {
  const journal = tableOf(session.place, 'journal');
  const byKey = `SELECT j.service, j.key FROM ${journal} j WHERE j.state = $1 AND ${targetOfKey('j.key')} = ANY($2)`;
  // Version 2: one index probe per target, and the rows without one (an older orgform's, written
  // while the schema moved to version 2) worked out from their keys.
  const query =
    schemaVersion >= 2 ? `SELECT j.service, j.key FROM unnest($2::text[]) AS t(target) JOIN ${journal} j ON j.state = $1 AND j.target = t.target UNION ALL ${byKey} AND j.target IS NULL` : byKey;
  const { rows } = await session.query<{ service: string; key: string }>(query, [session.place.name, targets]);
  return rows;
}

interface StoredRow {
  service: string;
  key: string;
  kind: JournalEntry['kind'];
  organisation: string;
  outcome: JournalEntry['outcome'];
  at: Date;
  run: string | null;
}

/**
 * Every entry of the state, sorted by service and key, FETCH_ROWS at a time through a cursor, all
 * from one snapshot (a read-only repeatable-read transaction): what was committed before it began.
 */
export async function* streamRows(session: PostgresSession): AsyncGenerator<JournalRow> {
  await session.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  let done = false;
  try {
    await session.query(
      `DECLARE journal_rows NO SCROLL CURSOR FOR
         SELECT service, key, kind, organisation, outcome, at, run FROM ${tableOf(session.place, 'journal')} WHERE state = $1 ORDER BY service, key`,
      [session.place.name],
    );
    for (;;) {
      const { rows } = await session.query<StoredRow>(`FETCH ${FETCH_ROWS} FROM journal_rows`);
      for (const row of rows) yield { service: row.service, key: row.key, entry: entryOf(row) };
      if (rows.length < FETCH_ROWS) break;
    }
    done = true;
  } finally {
    // A reader that stopped early ends the transaction too.
    await session.query(done ? 'COMMIT' : 'ROLLBACK').catch(() => undefined);
  }
}

function entryOf(row: StoredRow): JournalEntry {
  const entry: JournalEntry = { kind: row.kind, organisation: row.organisation, outcome: row.outcome, at: row.at.toISOString() };
  if (row.run !== null) entry.run = row.run;
  return entry;
}
