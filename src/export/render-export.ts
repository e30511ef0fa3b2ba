/**
 * The orgs.yaml that describes organisations as the service holds them: every organisation by slug
 * with its id, the billing fields that have a value (request spelling, fixed order), and the active
 * organisation. Deterministic, with no timestamp, so that exporting again gives the same bytes and a
 * diff in git shows only real changes. Pure.
 */
import type { Organisation } from '../api/types.js';
import { BILLING_UPDATE_FIELDS } from '../api/types.js';
import { escapeInterpolation } from '../config/interpolate.js';
import { formatYamlString, quoteYamlString } from './format-yaml-string.js';
import { selectExportable } from './select-exportable.js';

export interface RenderExportOptions {
  /** The service exported from, named in the header. */
  baseUrl?: string;
  /** The --filter used, named in the header (the file then holds only some organisations). */
  filter?: string;
  /** Where the JSON Schema is, for the yaml-language-server modeline; relative to the file. */
  schema?: string;
}

/** Where `npm install orgform` (or npm ci in a repository that depends on it) puts the schema. */
export const DEFAULT_SCHEMA_PATH = './node_modules/orgform/schemas/orgs.schema.json';

/** A value as the loader reads it back: `${` would otherwise be taken for an environment variable. */
function value(text: string): string {
  return formatYamlString(escapeInterpolation(text));
}

export function renderExport(orgs: readonly Organisation[], activeId: string | null, options: RenderExportOptions = {}): string {
  const { organisations, leftOut, activeSlug } = selectExportable(orgs, activeId);
  const from = options.baseUrl === undefined ? '' : ` from ${options.baseUrl.replace(/[\s\u0000-\u001f\u007f-\u009f]/g, '')}`;
  const which = options.filter === undefined ? '' : ` (only organisations matching ${quoteYamlString(options.filter)})`;
  const lines = [
    `# yaml-language-server: $schema=${options.schema ?? DEFAULT_SCHEMA_PATH}`,
    `# Written by \`orgform export\`${from}${which}.`,
    '# Each organisation is matched by its id; billing lists the fields the service has a value for.',
    '# Edit, then run `orgform plan` to see what applying the edits would change.',
  ];
  if (leftOut.length > 0) {
    lines.push('# Left out, because orgs.yaml cannot declare them:');
    for (const org of leftOut) lines.push(`#   ${quoteYamlString(org.slug)} (id ${quoteYamlString(org.id)}): ${org.reason}`);
  }
  lines.push('version: 1');
  if (activeSlug !== null) lines.push(`activeOrganisation: ${value(activeSlug)}`);
  lines.push(organisations.length === 0 ? 'organisations: {}' : 'organisations:');
  for (const org of organisations) {
    lines.push(`  ${formatYamlString(org.slug)}:`, `    id: ${value(org.id)}`);
    for (const note of org.leftOutFields) lines.push(`    # Left out: ${note}`);
    const fields = BILLING_UPDATE_FIELDS.filter((field) => org.billing[field] !== undefined);
    if (fields.length > 0) lines.push('    billing:');
    for (const field of fields) lines.push(`      ${field}: ${value(org.billing[field] as string)}`);
  }
  return lines.join('\n') + '\n';
}
