/**
 * Parsed documents → the DesiredState, or every problem found. Pure: data in, data out. The order
 * of checks: the shape (JSON Schema, with messages rewritten for people), then what a schema cannot
 * say (an id listed twice, an invitation both accepted and revoked, an organisation declared in
 * two files), each on whatever parts are well-formed, so that one run reports everything.
 */
import { checkAcrossDocuments } from './check-across-documents.js';
import { declareDocument, type DeclaredDocument, type DeclaredOrganisation } from './declare-document.js';
import { describeSchemaError, type SchemaErrorContext } from './describe-schema-error.js';
import { sortProblems, toProblem } from './format-problem.js';
import type { PositionedMessage } from './parse-yaml.js';
import { readTree } from './read-tree.js';
import type { SchemaValidator } from './schema-validator.js';
import { SchemaWalker } from './schema-walker.js';
import { locate, type SourceNode } from './source-tree.js';
import type { ConfigProblem } from '../model/config-problem.js';
import { SUPPORTED_VERSION, type DesiredOrganisation, type DesiredState } from './types.js';
import { UniqueMessages } from './unique-messages.js';

export { SUPPORTED_VERSION } from './types.js';

export interface ParsedDocument {
  /** As shown in messages: as given on the command line, relative to the working directory. */
  file: string;
  /** Of the file's bytes. */
  sha256: string;
  /** null when the document has no content. */
  root: SourceNode | null;
}

export type LoadResult = { ok: true; state: DesiredState } | { ok: false; problems: ConfigProblem[] };

export interface ValidateOptions {
  env: Readonly<Record<string, string | undefined>>;
  validator: SchemaValidator;
}

function toDesired(org: DeclaredOrganisation): DesiredOrganisation {
  const pos = org.keyPos;
  return {
    slug: org.slug,
    ...(org.id !== undefined && { id: org.id.id }),
    ...(org.billing !== undefined && { billing: org.billing }),
    invitations: { accept: org.accept.map((i) => i.id), revoke: org.revoke.map((i) => i.id) },
    notificationChannels: { remove: org.remove.map((i) => i.id) },
    source: { file: org.document.file, line: pos.line, col: pos.col },
  };
}

function checkDocument(
  doc: ParsedDocument,
  walker: SchemaWalker,
  options: ValidateOptions,
): { problems: ConfigProblem[]; declared: DeclaredDocument | undefined } {
  const toProblemHere = (positioned: PositionedMessage): ConfigProblem => toProblem(doc.file, positioned);
  if (doc.root === null) {
    return {
      problems: [toProblemHere({ pos: { line: 1, col: 1 }, message: `the file declares nothing: an orgs file starts with "version: ${SUPPORTED_VERSION}"` })],
      declared: undefined,
    };
  }
  const tree = readTree(doc.root, walker, options.env);
  const problems = tree.problems.map(toProblemHere);
  if (tree.value === undefined) return { problems, declared: undefined };

  const flawed = new Set(tree.claimed);
  const { validate } = options.validator;
  if (!validate(tree.value)) {
    const ctx: SchemaErrorContext = { root: doc.root, value: tree.value, walker, claimed: tree.claimed };
    const described = new UniqueMessages();
    for (const error of validate.errors ?? []) {
      flawed.add(error.instancePath);
      const message = describeSchemaError(error, ctx);
      if (message !== undefined) described.add(message.pos, message.message);
    }
    problems.push(...described.messages.map(toProblemHere));
  }
  return { problems, declared: declareDocument(doc.file, doc.root, tree.value, flawed) };
}

export function validateDocuments(docs: readonly ParsedDocument[], options: ValidateOptions): LoadResult {
  const walker = new SchemaWalker(options.validator.schema);
  const problems: ConfigProblem[] = [];
  const documents: DeclaredDocument[] = [];
  for (const doc of docs) {
    const checked = checkDocument(doc, walker, options);
    problems.push(...checked.problems);
    if (checked.declared !== undefined) documents.push(checked.declared);
  }
  problems.push(...checkAcrossDocuments(documents));
  if (problems.length > 0) return { ok: false, problems: sortProblems(problems, docs.map((d) => d.file)) };

  const organisations = documents
    .flatMap((declared) => declared.organisations.map(toDesired))
    .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const activeIn = documents.find((d) => d.active !== undefined);
  const activePos = activeIn && locate(activeIn.root, ['activeOrganisation']);
  const state: DesiredState = {
    version: SUPPORTED_VERSION,
    ...(activeIn?.active !== undefined &&
      activePos !== undefined && {
        activeOrganisation: { slug: activeIn.active, source: { file: activeIn.file, ...activePos } },
      }),
    organisations,
    files: docs.map((d) => ({ path: d.file, sha256: d.sha256 })),
  };
  return { ok: true, state };
}

/** One document on its own (see validateDocuments for several, which also checks across them). */
export function validateDocument(doc: ParsedDocument, options: ValidateOptions): LoadResult {
  return validateDocuments([doc], options);
}
