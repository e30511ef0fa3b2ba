/**
 * The document a Terraform HTTP backend stores: Terraform's state shape (GitLab needs a top-level
 * integer `serial`, and keeps each write as a version keyed by it; Gitea reads `serial` and
 * `lineage` too), with orgform's journal inside under `orgform`, and the runs that hold the state
 * under `orgform.runs` (lock ID → holder). Pure.
 *
 *   { "version": 4, "terraform_version": "orgform 0.1.0", "serial": 12, "lineage": "…",
 *     "outputs": {}, "resources": [], "orgform": { "version": 1, "services": { … }, "runs": { … } } }
 *
 * A document is orgform's only when it holds `orgform` and its `terraform_version` is orgform's.
 * Anything else stored there (a Terraform workspace's state, even an empty one) is refused, never
 * overwritten: orgform may only replace what it wrote.
 */
import { randomUUID } from 'node:crypto';
import { OrgformError } from '../errors.js';
import { checkJournalData, JOURNAL_VERSION, type JournalData, type LoggedEntry } from './journal-entry.js';
import type { LockHolder } from './state-backend.js';

export interface StateDocument {
  serial: number;
  lineage: string;
  data: JournalData;
  /** The runs registered on the state, by lock ID. */
  runs: Record<string, LockHolder>;
  /** Whether a document was stored (false: 404, 204 or an empty body, a state to be made). */
  stored: boolean;
}

/** A state that holds nothing yet (404, 204 or an empty body): the first write makes serial 1. */
export function emptyDocument(): StateDocument {
  return { serial: 0, lineage: randomUUID(), data: { version: JOURNAL_VERSION, services: {} }, runs: {}, stored: false };
}

const ORGFORM_VERSION = /^orgform /;

export function parseStateDocument(text: string, location: string): StateDocument {
  if (text.trim() === '') return emptyDocument();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(location, 'is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(location, 'is not a JSON object');
  const doc = value as { serial?: unknown; lineage?: unknown; terraform_version?: unknown; resources?: unknown; outputs?: unknown; orgform?: unknown };
  if (doc.orgform === undefined || typeof doc.terraform_version !== 'string' || !ORGFORM_VERSION.test(doc.terraform_version)) throw foreign(location, doc);
  if (typeof doc.serial !== 'number' || !Number.isSafeInteger(doc.serial) || doc.serial < 0) throw invalid(location, 'has no serial (a whole number)');
  if (typeof doc.lineage !== 'string' || doc.lineage === '') throw invalid(location, 'has no lineage');
  const { runs, ...journal } = (typeof doc.orgform === 'object' && doc.orgform !== null ? doc.orgform : {}) as { runs?: unknown };
  return { serial: doc.serial, lineage: doc.lineage, data: checkJournalData(journal, `at ${location}`), runs: checkRuns(runs, location), stored: true };
}

export function serializeStateDocument(doc: StateDocument, orgformVersion: string): string {
  return JSON.stringify({
    version: 4,
    terraform_version: `orgform ${orgformVersion}`,
    serial: doc.serial,
    lineage: doc.lineage,
    outputs: {},
    resources: [],
    orgform: Object.keys(doc.runs).length === 0 ? doc.data : { ...doc.data, runs: doc.runs },
  });
}

/** Adds the entries of `batch` that the document lacks (the first recorded stays); how many were added. */
export function mergeEntries(data: JournalData, batch: readonly LoggedEntry[]): number {
  let added = 0;
  for (const { service, key, entry } of batch) {
    const entries = (data.services[service] ??= {});
    if (entries[key] !== undefined) continue;
    entries[key] = entry;
    added += 1;
  }
  return added;
}

/**
 * Why a document read before a write is not the one this run may write over, if it is not: another
 * lineage (the state was deleted and made again), or the run's registration gone (force-unlocked).
 * `serial`, when given, is the one this run last wrote: a run holding the whole state is the only
 * writer, so any other serial means someone wrote without its lock.
 */
export function whyNotOurs(doc: StateDocument, ours: { lineage: string; runId: string; serial?: number }): string | undefined {
  if (doc.lineage !== ours.lineage) return `the state was replaced meanwhile (its lineage is ${doc.lineage}, not ${ours.lineage})`;
  if (doc.runs[ours.runId] === undefined) return 'this run is no longer registered in the state: its lock was broken (force-unlock)';
  if (ours.serial !== undefined && doc.serial !== ours.serial) return `someone else wrote the state meanwhile (its serial is ${doc.serial}, not ${ours.serial}, the one this run wrote last)`;
  return undefined;
}

function checkRuns(value: unknown, location: string): Record<string, LockHolder> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(location, 'has a malformed "orgform.runs"');
  for (const [id, holder] of Object.entries(value as Record<string, unknown>)) {
    if (typeof holder !== 'object' || holder === null || (holder as { id?: unknown }).id !== id) throw invalid(location, `has a malformed run ${id} in "orgform.runs"`);
  }
  return value as Record<string, LockHolder>;
}

/** Someone else's document (a Terraform workspace's, most likely), said with what identifies it. */
function foreign(location: string, doc: { serial?: unknown; terraform_version?: unknown; resources?: unknown; outputs?: unknown }): OrgformError {
  const resources = Array.isArray(doc.resources) ? doc.resources.length : 0;
  // Outputs are a workspace's data too (a state destroyed down to its outputs still holds them).
  const outputs = typeof doc.outputs === 'object' && doc.outputs !== null ? Object.keys(doc.outputs).length : 0;
  const facts = [
    typeof doc.terraform_version === 'string' ? `terraform_version ${JSON.stringify(doc.terraform_version.slice(0, 40))}` : undefined,
    typeof doc.serial === 'number' ? `serial ${doc.serial}` : undefined,
    `${resources} resource${resources === 1 ? '' : 's'}`,
    `${outputs} output${outputs === 1 ? '' : 's'}`,
  ].filter((fact) => fact !== undefined);
  return new OrgformError(
    'STATE_INVALID',
    `The state at ${location} holds something other than orgform's journal (a Terraform state: ${facts.join(', ')}). orgform will not overwrite it, even empty: give orgform a state of its own (another name in the address).`,
  );
}

function invalid(location: string, problem: string): OrgformError {
  return new OrgformError('STATE_INVALID', `The state at ${location} ${problem}. orgform will not overwrite it: restore an earlier version of it, or give orgform another state.`);
}
