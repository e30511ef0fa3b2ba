/**
 * `orgform export -f FILE`: the orgs.yaml that people already own, brought in line with the
 * service by changing only the values that differ, in place, so that the change reads as a small
 * patch to their file. What the file states as a rule rather than a value is never rewritten: a
 * default (shared by other organisations), a `${VAR}` reference (the file would then hold the
 * secret), a value written through an alias or anchor (another place would change too), an id or a
 * key. Each of those differences is a warning that names the place and what to do instead. Pure.
 */
import { isMap, isSeq, type Node, type Scalar } from 'yaml';
import { observeBilling } from '../api/observe-billing.js';
import type { Organisation } from '../api/types.js';
import { escapeInterpolation, hasReference, interpolate, type ConfigVariables } from '../config/interpolate.js';
import { organisationAddress } from '../model/address.js';
import { BILLING_FIELDS } from '../model/billing.js';
import { applyEdits, findLineEdits, type TextEdit } from './create-file-patch.js';
import { quoteYamlString } from './format-yaml-string.js';
import { keyText, parseForUpdate, stringScalar, valueOf, type ParsedForUpdate } from './parse-for-update.js';
import { selectExportable, whyBillingCannotBeWritten } from './select-exportable.js';

export interface LiveState {
  /** Every organisation you belong to, with its billing read by id wherever the file declares billing. */
  organisations: readonly Organisation[];
  /** The active organisation's id; null when the listing could not tell. */
  activeId: string | null;
}

export interface ValueChange {
  /** As plan names it: `organisations.acme.billing.customerID`, `activeOrganisation`. */
  address: string;
  before: string;
  after: string;
}

export interface DocumentUpdate {
  /** The file with the changes; the very same text when there are none. */
  text: string;
  /** Where `text` differs from the file read, in order (createFilePatch makes the patch of them); absent when it does not. */
  edits?: TextEdit[];
  changes: ValueChange[];
  /** Differences left as they are, each `FILE:LINE:COL: …` with what to do about it. */
  warnings: string[];
}


/** A declared value for a message: as written where it holds a variable (a message never holds a value from the environment). */
function shown(raw: string, value: string): string {
  return hasReference(raw) ? raw : quoteYamlString(value);
}

export function updateDocument(file: string, text: string, live: LiveState, variables: ConfigVariables): DocumentUpdate {
  const parsed = parseForUpdate(file, text);
  const changes: ValueChange[] = [];
  const warnings: string[] = [];
  const byId = new Map<string, Organisation>();
  const bySlug = new Map<string, Organisation>();
  for (const org of live.organisations) {
    if (!byId.has(org.id)) byId.set(org.id, org);
    if (!bySlug.has(org.slug)) bySlug.set(org.slug, org);
  }
  const root = parsed.doc.contents;
  const defaults = parsed.resolve(valueOf(parsed.resolve(valueOf(root, 'defaults')), 'billing'));
  const organisations = parsed.resolve(valueOf(root, 'organisations'));
  for (const pair of isMap(organisations) ? organisations.items : []) {
    const slug = keyText(pair.key);
    if (slug === undefined) continue;
    const declared = { slug, key: pair.key as Node, value: pair.value, defaults };
    updateOrganisation(parsed, declared, { byId, bySlug }, variables, { changes, warnings });
  }
  updateActive(parsed, live, variables, { changes, warnings });
  if (changes.length === 0) return { text, changes, warnings };
  const updated = parsed.toText();
  return { text: updated, edits: editsBetween(text, updated, parsed.edits()), changes, warnings };
}

/** The edits the values were changed by, when they give `after` exactly; else the lines that differ (findLineEdits). */
function editsBetween(before: string, after: string, edits: TextEdit[] | undefined): TextEdit[] {
  return edits !== undefined && applyEdits(before, edits) === after ? edits : findLineEdits(before, after);
}

interface Declared {
  slug: string;
  key: Node;
  value: unknown;
  defaults: unknown;
}

interface Out {
  changes: ValueChange[];
  warnings: string[];
}

/** The first of each id and slug, in the order listed. */
interface LiveIndex {
  byId: Map<string, Organisation>;
  bySlug: Map<string, Organisation>;
}

/** The live organisation the file means, or why there is none (a warning, or nothing while an invitation is still to accept). */
function match(parsed: ParsedForUpdate, d: Declared, org: unknown, live: LiveIndex, variables: ConfigVariables): Organisation | string | undefined {
  const name = quoteYamlString(d.slug);
  const idNode = stringScalar(parsed.resolve(valueOf(org, 'id')));
  const id = idNode === undefined ? undefined : interpolate(idNode.value, variables);
  const accept = parsed.resolve(valueOf(parsed.resolve(valueOf(org, 'invitations')), 'accept'));
  const joining = isSeq(accept) && accept.items.length > 0;
  const notMember = `${parsed.at(d.key)}: organisation ${name} is not among the organisations you belong to; left as declared. Check the slug and id; plan will say the same`;
  if (idNode === undefined || id === undefined || !id.ok) return live.bySlug.get(d.slug) ?? notMember;
  const found = live.byId.get(id.value);
  if (found === undefined) {
    const other = live.bySlug.get(d.slug);
    if (other !== undefined) return `${parsed.at(idNode)}: organisation ${name} has the id ${quoteYamlString(other.id)} on the service, not ${shown(idNode.value, id.value)}; left as is (export never rewrites ids): correct the id, or remove it to match by slug`;
    return joining ? undefined : notMember;
  }
  if (found.slug !== d.slug) return `${parsed.at(d.key)}: organisation id ${shown(idNode.value, id.value)} has the slug ${quoteYamlString(found.slug)} on the service, not ${name}; left as is (export never renames keys): rename the key to ${quoteYamlString(found.slug)}, and activeOrganisation if it names it`;
  return found;
}

function updateOrganisation(parsed: ParsedForUpdate, d: Declared, live: LiveIndex, variables: ConfigVariables, out: Out): void {
  const org = parsed.resolve(d.value);
  const found = match(parsed, d, org, live, variables);
  if (typeof found !== 'object') {
    if (found !== undefined) out.warnings.push(found);
    return;
  }
  const ownNode = valueOf(org, 'billing');
  const own = parsed.resolve(ownNode);
  const declared = BILLING_FIELDS.map((field) => ({ field, node: valueOf(own, field) ?? valueOf(d.defaults, field), fromDefaults: valueOf(own, field) === undefined })).filter((f) => f.node !== undefined);
  if (declared.length === 0) return;
  const name = quoteYamlString(d.slug);
  const observed = observeBilling(found.billing, true);
  if (!observed.known) {
    out.warnings.push(`${parsed.at(d.key)}: the billing of organisation ${name} cannot be read (${observed.reason}); its billing is left as declared. Plan reports the same; check the organisation on the service`);
    return;
  }
  for (const { field, node, fromDefaults } of declared) {
    const scalar = stringScalar(parsed.resolve(node));
    const value = scalar === undefined ? undefined : interpolate(scalar.value, variables);
    if (scalar === undefined || value === undefined || !value.ok) continue; // the loader refuses these: nothing to compare
    const current = observed.values[field];
    if (current === value.value) continue;
    const where = `${parsed.at(fromDefaults ? d.key : (node as Node))}: organisation ${name}: billing.${field}`;
    const shared = [d.value, ownNode, node].some((n) => parsed.isShared(n));
    const why = current === null || current === '' ? undefined : whyBillingCannotBeWritten(field, current);
    const stated = fromDefaults ? `comes from defaults.billing (${shown(scalar.value, value.value)})` : `is ${shown(scalar.value, value.value)} here`;
    if (current === null || current === '') {
      // orgs.yaml has no way to say "empty": a field left out means "leave it as it is", not "clear it".
      out.warnings.push(`${where} ${stated}, but the service holds no value; left as is (orgs.yaml cannot declare an empty field): ${fromDefaults ? 'apply to set it again' : 'remove the line to stop declaring it, or apply to set it again'}`);
    } else if (fromDefaults) {
      out.warnings.push(`${where} ${stated}, but the service has ${quoteYamlString(current)}; left as is, because the default applies to other organisations too: add ${field}: ${quoteYamlString(current)} under ${organisationAddress(d.slug)}.billing, or change the default`);
    } else if (hasReference(scalar.value)) {
      out.warnings.push(`${where} is ${scalar.value}, and the service has ${quoteYamlString(current)}; left as is (a variable is never replaced by a value): update the variable, or write the value instead`);
    } else if (shared) {
      out.warnings.push(`${where} is written through an alias or anchor that another place uses, and the service has ${quoteYamlString(current)}; left as is: change it by hand`);
    } else if (why !== undefined) {
      out.warnings.push(`${where}: the service has ${quoteYamlString(current)}, which orgs.yaml cannot declare (${why}); left as is`);
    } else {
      parsed.setValue(scalar, escapeInterpolation(current));
      out.changes.push({ address: `${organisationAddress(d.slug)}.billing.${field}`, before: value.value, after: current });
    }
  }
}

/** activeOrganisation, where the file declares it: plan compares it every time, so it is state like billing. */
function updateActive(parsed: ParsedForUpdate, live: LiveState, variables: ConfigVariables, out: Out): void {
  const node = valueOf(parsed.doc.contents, 'activeOrganisation');
  const scalar = stringScalar(parsed.resolve(node));
  const value = scalar === undefined ? undefined : interpolate(scalar.value, variables);
  if (scalar === undefined || value === undefined || !value.ok || live.activeId === null) return;
  const current = live.organisations.find((o) => o.id === live.activeId)?.slug;
  if (current === undefined || current === value.value) return;
  const where = `${parsed.at(node as Node)}: activeOrganisation`;
  const writable = selectExportable(live.organisations, live.activeId).activeSlug === current;
  if (hasReference(scalar.value)) {
    out.warnings.push(`${where} is ${scalar.value}, and the active organisation is ${quoteYamlString(current)}; left as is (a variable is never replaced by a value): update the variable`);
  } else if (parsed.isShared(node)) {
    out.warnings.push(`${where} is written through an alias or anchor that another place uses, and the active organisation is ${quoteYamlString(current)}; left as is: change it by hand`);
  } else if (!writable) {
    out.warnings.push(`${where}: the active organisation is ${quoteYamlString(current)}, which orgs.yaml cannot name; left as is`);
  } else {
    parsed.setValue(scalar as Scalar, escapeInterpolation(current));
    out.changes.push({ address: 'activeOrganisation', before: value.value, after: current });
  }
}
