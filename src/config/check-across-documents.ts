/**
 * What a schema cannot say, checked across lists, organisations and files: an id listed twice, an
 * invitation both accepted and revoked, an organisation declared in two files, two active ones.
 * The first of each is taken as meant; the later one is reported, pointing back at the first.
 * Documents are checked one after another as they are read, keeping only the firsts.
 */
import type { DeclaredDocument, Item } from './declare-document.js';
import { quoteValue } from './describe-bad-identifier.js';
import { toProblem } from './format-problem.js';
import type { Position } from './source-tree.js';
import type { ConfigProblem } from '../model/config-problem.js';

/** Something declared at a place in a file (the shape of a desired organisation's `source`, which it may be). */
interface Place {
  file: string;
  line: number;
  col: number;
}

/** The first organisation declared under a slug, or the first of an id. */
interface First extends Place {
  slug: string;
  list: string;
}

/** Where `other` stands, as seen from a message about `here`: a line in the same file, else FILE:LINE:COL. */
function describePlace(other: Place, here: Place): string {
  if (other.file !== here.file) return `${other.file}:${other.line}:${other.col}`;
  return other.line === here.line ? `line ${other.line}, column ${other.col}` : `line ${other.line}`;
}

function placeOf(file: string, pos: Position): Place {
  return { file, line: pos.line, col: pos.col };
}

/**
 * For an item reached through an alias, which organisation has it that way: the message stands at
 * the alias, and the anchor it points to is another organisation's.
 */
function throughAlias(item: Item): string {
  if (!item.throughAlias) return '';
  const more = item.more === 0 ? '' : ` (and ${item.more} more ${item.more === 1 ? 'id' : 'ids'} of the same list)`;
  return `: organisation "${item.owner.slug}" (line ${item.owner.source.line}) has it through this alias${more}`;
}

/** An id as a message quotes it: as written where it came from the environment, never its value. */
function quoteId(item: Item): string {
  return quoteValue(item.id, item.written);
}

function itemFirst(item: Item): First {
  return { ...placeOf(item.owner.document.file, item.pos), slug: item.owner.slug, list: item.list };
}

export class AcrossDocuments {
  private readonly slugs = new Map<string, Place>();
  private readonly orgIds = new Map<string, First>();
  private readonly invitations = new Map<string, First>();
  private readonly channels = new Map<string, First>();
  private active: Place | undefined;

  /** The problems `document` has with what the documents before it declare. */
  check(document: DeclaredDocument): ConfigProblem[] {
    const problems: ConfigProblem[] = [];
    const report = (here: Place, message: string): void => {
      problems.push(toProblem(here.file, { pos: { line: here.line, col: here.col }, message }));
    };
    const checkListed = (item: Item, firsts: Map<string, First>, noun: string) => {
      const seen = firsts.get(item.id);
      if (seen === undefined) {
        firsts.set(item.id, itemFirst(item));
        return;
      }
      const here = placeOf(item.owner.document.file, item.pos);
      const there = describePlace(seen, here);
      // Organisations are declared once (a second one is reported above): a slug names one owner.
      const via = throughAlias(item);
      if (seen.slug !== item.owner.slug || seen.file !== here.file) report(here, `${noun} ${quoteId(item)} is also listed under organisation "${seen.slug}" (${there})${via}`);
      else if (seen.list === item.list) report(here, `${noun} ${quoteId(item)} is listed twice (first at ${there})${via}`);
      else report(here, `${noun} ${quoteId(item)} is both accepted (${there}) and revoked: keep one${via}`);
    };

    if (document.active !== undefined) {
      const here = placeOf(document.file, document.active.pos);
      if (this.active === undefined) this.active = here;
      else report(here, `activeOrganisation is already set at ${describePlace(this.active, here)}: set it in one file only`);
    }
    for (const org of document.organisations) {
      // The organisation's own source position, shared with the desired state: no copy per organisation.
      const here = org.source;
      const first = this.slugs.get(org.slug);
      if (first === undefined) this.slugs.set(org.slug, here);
      else report(here, `organisation "${org.slug}" is already declared at ${describePlace(first, here)}`);

      if (org.id !== undefined) {
        const seen = this.orgIds.get(org.id.id);
        if (seen === undefined) this.orgIds.set(org.id.id, itemFirst(org.id));
        else {
          const at = placeOf(document.file, org.id.pos);
          report(at, `id ${quoteId(org.id)} is also the id of organisation "${seen.slug}" (${describePlace(seen, at)})${throughAlias(org.id)}`);
        }
      }
      for (const item of org.accept) checkListed(item, this.invitations, 'invitation');
      for (const item of org.revoke) checkListed(item, this.invitations, 'invitation');
      for (const item of org.remove) checkListed(item, this.channels, 'channel');
    }
    return problems;
  }
}
