/**
 * The orgs.yaml that describes organisations as the service holds them: every organisation by slug
 * with its id, the billing fields that have a value (request spelling, fixed order), and the active
 * organisation. Deterministic, with no timestamp, so that exporting again gives the same bytes and a
 * diff in git shows only real changes. Built as a yaml Document (strings written by safeStringTags,
 * so that the loader reads back exactly what the service holds). Pure.
 */
import { Document, Pair, Scalar, YAMLMap, type ScalarTag, type Tags } from 'yaml';
import type { Organisation } from '../api/types.js';
import { BILLING_FIELDS } from '../model/billing.js';
import { escapeInterpolation } from '../config/interpolate.js';
import { SUPPORTED_VERSION } from '../model/desired-state.js';
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
function value(text: string): Scalar<string> {
  return new Scalar(escapeInterpolation(text));
}

/** `key: node`; keys are slugs and field names, which the loader never interpolates. */
function pair(key: string, node: unknown): Pair<Scalar<string>, unknown> {
  return new Pair(new Scalar(key), node);
}

/**
 * Pairs are pushed, not added: YAMLMap.add scans the map for the key on every call (quadratic in the
 * organisations), and selectExportable has already made each slug unique.
 */
export function renderExport(orgs: readonly Organisation[], activeId: string | null, options: RenderExportOptions = {}): string {
  const { organisations, leftOut, activeSlug } = selectExportable(orgs, activeId);
  const from = options.baseUrl === undefined ? '' : ` from ${options.baseUrl.replace(/[\s\u0000-\u001f\u007f-\u009f]/g, '')}`;
  const which = options.filter === undefined ? '' : ` (only organisations matching ${quoteYamlString(options.filter)})`;
  // Comment text follows the "#" as written: hence the leading space of each line.
  const header = [
    ` yaml-language-server: $schema=${options.schema ?? DEFAULT_SCHEMA_PATH}`,
    ` Written by \`orgform export\`${from}${which}.`,
    ' Each organisation is matched by its id; billing lists the fields the service has a value for.',
    ' Edit, then run `orgform plan` to see what applying the edits would change.',
  ];
  if (leftOut.length > 0) {
    header.push(' Left out, because orgs.yaml cannot declare them:');
    for (const org of leftOut) header.push(`   ${quoteYamlString(org.slug)} (id ${quoteYamlString(org.id)}): ${org.reason}`);
  }

  const root = new YAMLMap<Scalar<string>, unknown>();
  // On the root rather than the document: yaml puts a blank line after a document's own comment.
  root.commentBefore = header.join('\n');
  root.items.push(pair('version', new Scalar(SUPPORTED_VERSION)));
  if (activeSlug !== null) root.items.push(pair('activeOrganisation', value(activeSlug)));
  const declared = new YAMLMap<Scalar<string>, unknown>();
  root.items.push(pair('organisations', declared));
  for (const org of organisations) {
    const node = new YAMLMap<Scalar<string>, unknown>();
    node.items.push(pair('id', value(org.id)));
    const notes = org.leftOutFields.map((note) => ` Left out: ${note}`).join('\n');
    const fields = BILLING_FIELDS.filter((field) => org.billing[field] !== undefined);
    if (fields.length > 0) {
      const billing = new YAMLMap<Scalar<string>, unknown>();
      for (const field of fields) billing.items.push(pair(field, value(org.billing[field] as string)));
      const key = new Scalar('billing');
      if (notes !== '') key.commentBefore = notes;
      node.items.push(new Pair(key, billing));
    } else if (notes !== '') {
      node.comment = notes;
    }
    declared.items.push(pair(org.slug, node));
  }

  const doc = new Document(null, { version: '1.2', customTags: safeStringTags });
  doc.contents = root;
  // An empty `organisations` map is written `{}`, which the loader reads as no organisations.
  return doc.toString({ lineWidth: 0, indent: 2 });
}

/*
 * The yaml package's tags with one change: every string is written by formatYamlString, plain
 * only when no YAML reader, 1.1 or 1.2, could take it for anything but that string, and otherwise
 * double-quoted with orgform's own escapes. yaml's own string writer would choose plain for `on`
 * or `0123` under the 1.2 core schema (which the loader refuses unquoted, because YAML 1.1 tools
 * read them as a boolean and a number), fold long lines, and write some control characters, the
 * line separators and lone surrogates as themselves.
 */
const STRING_TAG = 'tag:yaml.org,2002:str';

function isStringTag(tag: Tags[number]): tag is ScalarTag {
  return typeof tag === 'object' && tag.tag === STRING_TAG && !('collection' in tag && tag.collection !== undefined);
}

/**
 * For `customTags` of a Document. The caller stores values exactly as the loader must read them
 * back before interpolation (`${` already escaped as `$${`), so keys and values alike go through
 * here unchanged, on one line, whatever the context (block, flow or key).
 */
function safeStringTags(tags: Tags): Tags {
  return tags.map((tag) => (isStringTag(tag) ? { ...tag, stringify: (item) => formatYamlString(String(item.value)) } : tag));
}
