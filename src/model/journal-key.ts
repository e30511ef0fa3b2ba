/**
 * How the state journal names a one-shot change: `KIND ORGANISATION TARGET`, each part escaped so
 * that the three stay apart whatever the ids hold (only `%` and spaces are escaped, so keys stay
 * readable). The journal's unit of interest is the change's target alone (`KIND TARGET`): the
 * configuration names organisations by slug, and their ids are known only once the service is read,
 * so what a run may ask of the journal is known before it, by kind and target.
 */
import type { ChangeKind } from './change-kind.js';

export function keyPart(id: string): string {
  return id.replace(/%/g, '%25').replace(/ /g, '%20');
}

export function journalKey(kind: ChangeKind, organisationId: string, targetId: string): string {
  return `${kind} ${keyPart(organisationId)} ${keyPart(targetId)}`;
}

/** The target of a change of `kind` on `targetId`, as a journal key holds it: `KIND TARGET`. */
export function journalTarget(kind: ChangeKind, targetId: string): string {
  return `${kind} ${keyPart(targetId)}`;
}

/** The target of a journal key (its first and third parts), or undefined if it is not one. */
export function targetOfKey(key: string): string | undefined {
  const first = key.indexOf(' ');
  const second = first < 0 ? -1 : key.indexOf(' ', first + 1);
  if (second < 0 || key.indexOf(' ', second + 1) >= 0) return undefined;
  return key.slice(0, first) + key.slice(second);
}
