/**
 * The document a Terraform HTTP backend stores: Terraform's state shape (GitLab needs a top-level
 * integer `serial`, and keeps each write as a version keyed by it; Gitea reads `serial` and
 * `lineage` too), with orgform's journal inside under `orgform`. Pure.
 *
 *   { "version": 4, "terraform_version": "orgform 0.1.0", "serial": 12, "lineage": "…",
 *     "outputs": {}, "resources": [], "orgform": { "version": 1, "services": { … } } }
 */
import { randomUUID } from 'node:crypto';
import { OrgformError } from '../errors.js';
import { checkJournalData, JOURNAL_VERSION, type JournalData } from './journal-entry.js';

export interface StateDocument {
  serial: number;
  lineage: string;
  data: JournalData;
}

/** A state that holds nothing yet (404, 204 or an empty body): the first write makes serial 1. */
export function emptyDocument(): StateDocument {
  return { serial: 0, lineage: randomUUID(), data: { version: JOURNAL_VERSION, services: {} } };
}

export function parseStateDocument(text: string, location: string): StateDocument {
  if (text.trim() === '') return emptyDocument();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(location, 'is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(location, 'is not a JSON object');
  const doc = value as { serial?: unknown; lineage?: unknown; resources?: unknown; outputs?: unknown; orgform?: unknown };
  const serial = typeof doc.serial === 'number' && Number.isSafeInteger(doc.serial) && doc.serial >= 0 ? doc.serial : 0;
  const lineage = typeof doc.lineage === 'string' && doc.lineage !== '' ? doc.lineage : randomUUID();
  if (doc.orgform === undefined) {
    // Someone else's state (a Terraform workspace's, most likely): never overwritten.
    const resources = Array.isArray(doc.resources) ? doc.resources.length : 0;
    // Outputs are a workspace's data too (a state destroyed down to its outputs still holds them).
    const outputs = typeof doc.outputs === 'object' && doc.outputs !== null ? Object.keys(doc.outputs).length : 0;
    if (resources > 0 || outputs > 0 || Object.keys(doc).some((k) => !TERRAFORM_KEYS.has(k))) {
      const what = resources > 0 ? ` (a Terraform state with ${resources} resource${resources === 1 ? '' : 's'})` : outputs > 0 ? ` (a Terraform state with ${outputs} output${outputs === 1 ? '' : 's'})` : '';
      throw new OrgformError(
        'STATE_INVALID',
        `The state at ${location} holds something other than orgform's journal${what}. orgform will not overwrite it: give orgform a state of its own (another name in the address).`,
      );
    }
    return { serial, lineage, data: { version: JOURNAL_VERSION, services: {} } };
  }
  return { serial, lineage, data: checkJournalData(doc.orgform, `at ${location}`) };
}

const TERRAFORM_KEYS = new Set(['version', 'terraform_version', 'serial', 'lineage', 'outputs', 'resources', 'check_results']);

export function serializeStateDocument(doc: StateDocument, orgformVersion: string): string {
  return JSON.stringify({
    version: 4,
    terraform_version: `orgform ${orgformVersion}`,
    serial: doc.serial,
    lineage: doc.lineage,
    outputs: {},
    resources: [],
    orgform: doc.data,
  });
}

function invalid(location: string, problem: string): OrgformError {
  return new OrgformError('STATE_INVALID', `The state at ${location} ${problem}. orgform will not overwrite it: restore an earlier version of it, or give orgform another state.`);
}
