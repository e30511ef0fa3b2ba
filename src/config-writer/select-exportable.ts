/**
 * Which organisations an orgs.yaml can declare, and with what: the rules of schemas/orgs.schema.json
 * and of the loader, applied to what the service holds. Whatever the file could not carry faithfully
 * is left out with a reason rather than written in a form that the loader would refuse or read
 * differently. Pure.
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { checkIdentifier } from '../api/encode-segment.js';
import { observeBilling } from '../api/observe-billing.js';
import type { Organisation } from '../api/types.js';
import { BILLING_FIELDS, type BillingDetails, type BillingField } from '../model/billing.js';
import { codePointName, describeInvisibleCharacter, firstInvisibleCharacter, firstLoneSurrogate } from '../model/invisible-characters.js';
import { formatYamlString, quoteYamlString } from './format-yaml-string.js';

export interface ExportedOrganisation {
  slug: string;
  id: string;
  /** The fields the service has a value for. */
  billing: BillingDetails;
  /** Fields that have a value the file cannot declare, each with why. */
  leftOutFields: string[];
}

export interface LeftOutOrganisation {
  slug: string;
  id: string;
  reason: string;
}

export interface ExportSelection {
  /** Sorted by slug (UTF-16 code units, as the loader sorts). */
  organisations: ExportedOrganisation[];
  /** Sorted by slug, then id. */
  leftOut: LeftOutOrganisation[];
  /** The active organisation's slug, when it is among `organisations`. */
  activeSlug: string | null;
}

/** YAML refuses implicit keys longer than this. */
const MAX_KEY_CHARS = 1024;
const MAX_LENGTH = 512;
// The patterns of $defs.slug and $defs.identifier in schemas/orgs.schema.json.
const SLUG = /^[^/\s\u0000-\u001f\u007f-\u009f]+$/;
const IDENTIFIER = /^(?!\s)(?![\s\S]*\s$)[^\u0000-\u001f\u007f]+$/;
const EMAIL = fullFormats.email as RegExp;

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The loader refuses identifiers that hold an invisible character or a bidirectional control (config/describe-hidden-character.ts). */
function invisibleIn(text: string): string | undefined {
  const found = firstInvisibleCharacter(text);
  return found === undefined ? undefined : `${codePointName(found.char)} (${describeInvisibleCharacter(found.char)}), which orgs.yaml does not allow in identifiers`;
}

function whySlugCannotBeKey(slug: string): string | undefined {
  if (slug === '' || slug === '.' || slug === '..') return `the slug ${quoteYamlString(slug)} cannot name an organisation in orgs.yaml`;
  if (slug.length > MAX_LENGTH) return `the slug is ${slug.length} characters long (orgs.yaml allows ${MAX_LENGTH})`;
  if (firstLoneSurrogate(slug) !== undefined) return 'the slug is not valid Unicode';
  if (slug.includes('/')) return 'the slug contains "/"';
  if (!SLUG.test(slug)) return 'the slug contains whitespace or a control character';
  if (slug.includes('${')) return 'the slug contains "${", which orgs.yaml does not allow in keys';
  const invisible = invisibleIn(slug);
  if (invisible !== undefined) return `the slug holds ${invisible}`;
  if ([...formatYamlString(slug)].length > MAX_KEY_CHARS) return `the slug, quoted, is over YAML's ${MAX_KEY_CHARS}-character limit for keys`;
  return undefined;
}

function whyIdCannotBeWritten(id: string): string | undefined {
  const unsafe = checkIdentifier(id);
  if (unsafe !== undefined) return `its id cannot be used in a request: ${unsafe}`;
  if (firstLoneSurrogate(id) !== undefined) return 'its id is not valid Unicode';
  if (!IDENTIFIER.test(id)) return 'its id contains a control character';
  const invisible = invisibleIn(id);
  if (invisible !== undefined) return `its id holds ${invisible}`;
  return undefined;
}

/** Why orgs.yaml cannot declare this billing value as the service holds it, or undefined when it can. */
export function whyBillingCannotBeWritten(field: BillingField, value: string): string | undefined {
  if (firstLoneSurrogate(value) !== undefined) return 'not valid Unicode';
  if (field === 'billingEmail' && !EMAIL.test(value)) return 'not an e-mail address that orgs.yaml accepts';
  return undefined;
}

function pickBilling(org: Organisation): { billing: BillingDetails; leftOutFields: string[] } {
  const billing: BillingDetails = {};
  const leftOutFields: string[] = [];
  // Read as plan reads it (either spelling); billing that cannot be read is left out, and said so.
  const observed = observeBilling(org.billing, true);
  if (!observed.known) return { billing, leftOutFields: [`billing: ${observed.reason}`] };
  for (const field of BILLING_FIELDS) {
    const value = observed.values[field];
    if (value === null || value === '') continue;
    const why = whyBillingCannotBeWritten(field, value);
    if (why !== undefined) leftOutFields.push(`${field} ${quoteYamlString(value)}: ${why}`);
    else billing[field] = value;
  }
  return { billing, leftOutFields };
}

export function selectExportable(orgs: readonly Organisation[], activeId: string | null): ExportSelection {
  // The same id twice (a listing that shifted between pages) is one organisation: the first in a
  // fixed order, so that the order the service listed them in never changes the file.
  const byId = new Map<string, Organisation>();
  const key = (org: Organisation) => JSON.stringify(observeBilling(org.billing, true));
  const ordered = orgs.slice().sort((a, b) => compare(a.slug, b.slug) || compare(a.id, b.id) || compare(key(a), key(b)));
  for (const org of ordered) if (!byId.has(org.id)) byId.set(org.id, org);
  const sorted = Array.from(byId.values());

  const organisations: ExportedOrganisation[] = [];
  const leftOut: LeftOutOrganisation[] = [];
  const idOfSlug = new Map<string, string>();
  for (const org of sorted) {
    const reason = whySlugCannotBeKey(org.slug) ?? whyIdCannotBeWritten(org.id);
    const first = idOfSlug.get(org.slug);
    if (reason !== undefined) leftOut.push({ slug: org.slug, id: org.id, reason });
    else if (first !== undefined) leftOut.push({ slug: org.slug, id: org.id, reason: `organisation id ${quoteYamlString(first)} has the same slug` });
    else {
      idOfSlug.set(org.slug, org.id);
      organisations.push({ slug: org.slug, id: org.id, ...pickBilling(org) });
    }
  }
  const active = activeId === null ? undefined : organisations.find((o) => o.id === activeId);
  return { organisations, leftOut, activeSlug: active?.slug ?? null };
}
