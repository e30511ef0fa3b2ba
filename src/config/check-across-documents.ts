/**
 * What a schema cannot say, checked across lists, organisations and files: an id listed twice, an
 * invitation both accepted and revoked, an organisation declared in two files, two active ones.
 * The first of each is taken as meant; the later one is reported, pointing back at the first.
 */
import { itemPath, type DeclaredDocument, type DeclaredOrganisation, type Item } from './declare-document.js';
import { toProblem } from './format-problem.js';
import { locate, type DocPath, type Position } from './source-tree.js';
import type { ConfigProblem } from '../model/config-problem.js';

/** Something declared at a place in a file: the key or the value at `path`. */
interface Place {
  document: DeclaredDocument;
  path: DocPath;
  part: 'key' | 'value';
}

const itemPlace = (item: Item): Place => ({ document: item.owner.document, path: itemPath(item), part: 'value' });
const slugPlace = (org: DeclaredOrganisation): Place => ({ document: org.document, path: ['organisations', org.slug], part: 'key' });
const activePlace = (document: DeclaredDocument): Place => ({ document, path: ['activeOrganisation'], part: 'value' });

function positionOf(place: Place): Position {
  return locate(place.document.root, place.path, place.part);
}

/** Where `other` stands, as seen from a message about `here`: a line in the same file, else FILE:LINE:COL. */
function describePlace(other: Place, here: Place): string {
  const pos = positionOf(other);
  if (other.document.file !== here.document.file) return `${other.document.file}:${pos.line}:${pos.col}`;
  return pos.line === positionOf(here).line ? `line ${pos.line}, column ${pos.col}` : `line ${pos.line}`;
}

/** The value first recorded under `key`; undefined when there is none, and `value` is recorded as the first. */
function recordFirst<T>(firsts: Map<string, T>, key: string, value: T): T | undefined {
  const first = firsts.get(key);
  if (first === undefined) firsts.set(key, value);
  return first;
}

export function checkAcrossDocuments(documents: readonly DeclaredDocument[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const report = (here: Place, message: string): void => {
    problems.push(toProblem(here.document.file, { pos: positionOf(here), message }));
  };
  const slugs = new Map<string, DeclaredOrganisation>();
  const orgIds = new Map<string, Item>();
  const invitations = new Map<string, Item>();
  const channels = new Map<string, Item>();
  let active: DeclaredDocument | undefined;

  const checkListed = (item: Item, firsts: Map<string, Item>, noun: string) => {
    const seen = recordFirst(firsts, item.id, item);
    if (seen === undefined) return;
    const here = itemPlace(item);
    const there = describePlace(itemPlace(seen), here);
    if (seen.owner !== item.owner) report(here, `${noun} "${item.id}" is also listed under organisation "${seen.owner.slug}" (${there})`);
    else if (seen.list === item.list) report(here, `${noun} "${item.id}" is listed twice (first at ${there})`);
    else report(here, `${noun} "${item.id}" is both accepted (${there}) and revoked: keep one`);
  };

  for (const document of documents) {
    if (document.active !== undefined) {
      if (active === undefined) active = document;
      else {
        const here = activePlace(document);
        report(here, `activeOrganisation is already set at ${describePlace(activePlace(active), here)}: set it in one file only`);
      }
    }
    for (const org of document.organisations) {
      const first = recordFirst(slugs, org.slug, org);
      if (first !== undefined) report(slugPlace(org), `organisation "${org.slug}" is already declared at ${describePlace(slugPlace(first), slugPlace(org))}`);

      if (org.id !== undefined) {
        const seen = recordFirst(orgIds, org.id.id, org.id);
        if (seen !== undefined) {
          const here = itemPlace(org.id);
          report(here, `id "${org.id.id}" is also the id of organisation "${seen.owner.slug}" (${describePlace(itemPlace(seen), here)})`);
        }
      }
      for (const item of org.accept) checkListed(item, invitations, 'invitation');
      for (const item of org.revoke) checkListed(item, invitations, 'invitation');
      for (const item of org.remove) checkListed(item, channels, 'channel');
    }
  }
  return problems;
}
