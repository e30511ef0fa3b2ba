/**
 * Parsed documents → the DesiredState, or every problem found. Pure: data in, data out. The order
 * of checks: the shape (JSON Schema, with messages rewritten for people), then what a schema cannot
 * say (an id listed twice, an invitation both accepted and revoked, an organisation declared in
 * two files), each on whatever parts are well-formed, so that one run reports everything.
 */
import { AcrossDocuments } from './check-across-documents.js';
import { declareDocument, type DeclaredDocument, type DeclaredOrganisation, type Flawed } from './declare-document.js';
import { describeSchemaError, type SchemaErrorContext } from './describe-schema-error.js';
import { sortProblems, toProblem } from './format-problem.js';
import { type PositionedMessage, type SourceNode, toPointer, UniqueMessages } from './source-tree.js';
import type { ConfigVariables } from './interpolate.js';
import { fillRepeats, readTree } from './read-tree.js';
import type { SchemaValidator } from './schema-validator.js';
import { SchemaWalker } from './schema-walker.js';
import type { ConfigProblem } from '../model/config-problem.js';
import { SUPPORTED_VERSION, type DesiredOrganisation, type DesiredState } from '../model/desired-state.js';

export { SUPPORTED_VERSION } from '../model/desired-state.js';

export interface ParsedDocument {
  /** As shown in messages: as given on the command line, relative to the working directory. */
  file: string;
  /** Of the file's bytes. */
  sha256: string;
  /** null when the document has no content. */
  root: SourceNode | null;
}

/** `warnings`: what is allowed but may not be meant (an invisible character in a value), sorted as problems are. */
export type LoadResult = { ok: true; state: DesiredState; warnings: ConfigProblem[] } | { ok: false; problems: ConfigProblem[]; warnings: ConfigProblem[] };

export interface ValidateOptions {
  variables: ConfigVariables;
  validator: SchemaValidator;
}

// Most organisations of a bulk file declare no invitations and no channels: they share these
// (frozen) empty lists instead of five objects each (docs/performance.md, Memory).
const NO_INVITATIONS: DesiredOrganisation['invitations'] = Object.freeze({ accept: Object.freeze([]), revoke: Object.freeze([]) });
const NO_CHANNELS: DesiredOrganisation['notificationChannels'] = Object.freeze({ remove: Object.freeze([]) });

function toDesired(org: DeclaredOrganisation): DesiredOrganisation {
  const { slug, billing, source } = org;
  const invitations = org.accept.length + org.revoke.length === 0 ? NO_INVITATIONS : { accept: org.accept.map((i) => i.id), revoke: org.revoke.map((i) => i.id) };
  const notificationChannels = org.remove.length === 0 ? NO_CHANNELS : { remove: org.remove.map((i) => i.id) };
  // A literal for each shape: an object built with spreads keeps room for a property more than it
  // has (8 bytes of each of a million organisations, held to the end of the run).
  if (org.id === undefined) return billing === undefined ? { slug, invitations, notificationChannels, source } : { slug, billing, invitations, notificationChannels, source };
  const id = org.id.id;
  return billing === undefined ? { slug, id, invitations, notificationChannels, source } : { slug, id, billing, invitations, notificationChannels, source };
}

function checkDocument(
  doc: ParsedDocument,
  walker: SchemaWalker,
  options: ValidateOptions,
): { problems: ConfigProblem[]; warnings: ConfigProblem[]; declared: DeclaredDocument | undefined } {
  const toProblemHere = (positioned: PositionedMessage): ConfigProblem => toProblem(doc.file, positioned);
  if (doc.root === null) {
    return {
      problems: [toProblemHere({ pos: { line: 1, col: 1 }, message: `the file declares nothing: an orgs file starts with "version: ${SUPPORTED_VERSION}"` })],
      warnings: [],
      declared: undefined,
    };
  }
  const tree = readTree(doc.root, walker, options.variables);
  const problems = tree.problems.map(toProblemHere);
  const warnings = tree.warnings.map(toProblemHere);

  // What the schema refused, beside what readTree reported (claimed): neither takes part in the checks across lists.
  const refused = new Set<string>();
  const { validate } = options.validator;
  const valid = validate(tree.value);
  // Where a shared value stands again the schema saw an empty stand-in: what it says there (a
  // mapping where a string belongs, say) it said where the value was first read.
  const repeated = tree.repeats.length === 0 ? undefined : new Set(tree.repeats.map((repeat) => toPointer(repeat.path)));
  fillRepeats(tree.value, tree.repeats);
  if (!valid) {
    const ctx: SchemaErrorContext = { root: doc.root, value: tree.value, walker, claimed: tree.claimed, interpolated: tree.interpolated };
    const described = new UniqueMessages();
    for (const error of validate.errors ?? []) {
      if (repeated?.has(error.instancePath)) continue;
      refused.add(error.instancePath);
      const message = describeSchemaError(error, ctx);
      if (message !== undefined) described.add(message.pos, message.message);
    }
    for (const message of described.messages) problems.push(toProblemHere(message));
  }
  const flawed: Flawed = { size: tree.claimed.size + refused.size, has: (pointer) => tree.claimed.has(pointer) || refused.has(pointer) };
  return { problems, warnings, declared: declareDocument(doc.file, doc.root, tree.value, flawed, tree.interpolated) };
}

/**
 * Documents checked one at a time, as they are read, so that only one file's tree is held at once;
 * `finish` gives the DesiredState, or every problem found.
 */
export class ConfigValidation {
  private readonly walker: SchemaWalker;
  private readonly across = new AcrossDocuments();
  private readonly problems: ConfigProblem[] = [];
  private readonly warnings: ConfigProblem[] = [];
  private readonly organisations: DesiredOrganisation[] = [];
  private readonly files: Array<{ path: string; sha256: string }> = [];
  private active: DesiredState['activeOrganisation'];

  constructor(private readonly options: ValidateOptions) {
    this.walker = new SchemaWalker(options.validator.schema);
  }

  add(doc: ParsedDocument): void {
    this.files.push({ path: doc.file, sha256: doc.sha256 });
    const checked = checkDocument(doc, this.walker, this.options);
    appendAll(this.problems, checked.problems);
    appendAll(this.warnings, checked.warnings);
    const declared = checked.declared;
    if (declared === undefined) return;
    appendAll(this.problems, this.across.check(declared));
    // Once anything is wrong there will be no DesiredState: keep checking, stop building it.
    if (this.problems.length > 0) return;
    for (const org of declared.organisations) this.organisations.push(toDesired(org));
    if (declared.active !== undefined && this.active === undefined) {
      this.active = { slug: declared.active.slug, source: { file: declared.file, ...declared.active.pos } };
    }
  }

  finish(): LoadResult {
    const order = this.files.map((f) => f.path);
    const warnings = sortProblems(this.warnings, order);
    if (this.problems.length > 0) return { ok: false, problems: sortProblems(this.problems, order), warnings };
    const organisations = this.organisations.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    const state: DesiredState = {
      version: SUPPORTED_VERSION,
      ...(this.active !== undefined && { activeOrganisation: this.active }),
      organisations,
      files: this.files,
    };
    return { ok: true, state, warnings };
  }
}

/**
 * `items` appended to `list` one by one: a document may hold any number of problems, and
 * `push(...items)` passes each as an argument, past what the stack holds at about 100,000.
 */
export function appendAll<T>(list: T[], items: readonly T[]): void {
  for (const item of items) list.push(item);
}

export function validateDocuments(docs: readonly ParsedDocument[], options: ValidateOptions): LoadResult {
  const validation = new ConfigValidation(options);
  for (const doc of docs) validation.add(doc);
  return validation.finish();
}

/** One document on its own (see validateDocuments for several, which also checks across them). */
export function validateDocument(doc: ParsedDocument, options: ValidateOptions): LoadResult {
  return validateDocuments([doc], options);
}
