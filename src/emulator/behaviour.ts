/**
 * The points the interface leaves open ("not shown"), each with every plausible answer, so that
 * the emulator can play any of them; grouped into profiles. `lenient` is the project's decisions
 * (the emulator's behaviour before points existed); `strict` is the least convenient plausible
 * answer of each point. Dependency-free on purpose: the CLI grammar imports it for --help.
 */

export interface Behaviour {
  /** UpdateBillingDetails: a field left out is kept (merge) or removed (replace). */
  'billing-put': 'merge' | 'replace';
  /**
   * GetOrganisations honours `limit` (client), answers pages of a fixed size whatever is asked
   * (fixed-50, fixed-100), or pages that shrink along the listing (shrinking: see SHRINKING_PAGES).
   */
  'page-size': 'client' | 'fixed-50' | 'fixed-100' | 'shrinking';
  /** How `next`/`prev` are written: an opaque cursor, a relative link or an absolute URL. */
  'next-link': 'cursor' | 'relative' | 'absolute';
  /** How a missing `next` (and `prev` on the first page) is written: left out, "" or null. */
  'last-next': 'omit' | 'empty' | 'null';
  /** Success answers of SetActiveOrganisation, UpdateBillingDetails, AcceptInvitation, DeleteInvitation. */
  'success-body': 'decided' | 'empty-200' | 'json-200' | 'no-content' | 'text-200' | 'mixed';
  /** DELETE of an invitation already gone: 404 (not-found) or the success answer (success). */
  'repeat-delete': 'not-found' | 'success';
  /** Deleting a channel deleted before: 404 (not-found) or 410 `gone`. */
  'gone-channel': 'not-found' | 'gone';
  /** Unknown extra fields on organisations and billing objects. */
  'extra-fields': 'off' | 'on';
  /** Retry-After on 429/503 as delta-seconds or as an HTTP date. */
  'retry-after': 'seconds' | 'http-date';
  /** GetOrganisations carries each organisation's billing (full) or leaves it out (omitted). */
  'listing-billing': 'full' | 'omitted';
  /** Reads spell billing ids customerId/... (response) or customerID/... like BillingUpdate (update). */
  'read-spelling': 'response' | 'update';
  /** GetOrganisation of an organisation the user is not a member of: 404 (refused) or 200 (readable). */
  'non-member-reads': 'refused' | 'readable';
  /** After accepting an invitation, this many reads do not show the new membership yet. */
  'membership-lag': number;
  /** A gateway answers requests under /api/v2 with an HTML 404: never, once per path, or always. */
  'gateway-404': 'off' | 'v2-once' | 'v2';
  /** GetOrganisations answers an empty page (with a `next`) before the second page, or before every page after the first. */
  'empty-pages': 'none' | 'one' | 'every';
  /** Every cursor is new text each time it is issued, the same position included (as encrypted cursors are). */
  'fresh-cursors': 'off' | 'on';
}

export type PointName = keyof Behaviour;
export type ProfileName = 'lenient' | 'strict';

export interface PointDefinition {
  /** The allowed values, lenient's first; `N` stands for a whole number. */
  readonly values: readonly string[];
  /** One line for --help. */
  readonly description: string;
}

export const POINTS: { readonly [K in PointName]: PointDefinition } = {
  'billing-put': {
    values: ['merge', 'replace'],
    description: 'UpdateBillingDetails: a field left out of the body is kept (merge) or removed from billing (replace)',
  },
  'page-size': {
    values: ['client', 'fixed-50', 'fixed-100', 'shrinking'],
    description: 'GetOrganisations honours limit (client), ignores it, even an invalid one, and answers pages of 50 or 100, or answers the first page as asked and each next one half the last, down to a tenth of the limit',
  },
  'next-link': {
    values: ['cursor', 'relative', 'absolute'],
    description: 'next/prev as an opaque cursor, a relative link or an absolute URL',
  },
  'last-next': {
    values: ['omit', 'empty', 'null'],
    description: 'a missing next (and prev on the first page) is left out, written "" or written null',
  },
  'success-body': {
    values: ['decided', 'empty-200', 'json-200', 'no-content', 'text-200', 'mixed'],
    description:
      'success answers of SetActive, UpdateBilling, AcceptInvitation, DeleteInvitation (mixed: 204, empty 200, text 200, text 200)',
  },
  'repeat-delete': {
    values: ['not-found', 'success'],
    description: 'deleting an invitation already deleted or accepted answers 404 or succeeds again',
  },
  'gone-channel': {
    values: ['not-found', 'gone'],
    description: 'deleting a notification channel deleted before answers 404 or 410 gone',
  },
  'extra-fields': {
    values: ['off', 'on'],
    description: 'organisations and billing objects carry unknown extra fields (createdAt, region, taxId, currency)',
  },
  'retry-after': {
    values: ['seconds', 'http-date'],
    description: 'Retry-After on 429/503 in seconds or as an HTTP date',
  },
  'listing-billing': {
    values: ['full', 'omitted'],
    description: 'GetOrganisations carries billing, or leaves it out (GetOrganisation still has it)',
  },
  'read-spelling': {
    values: ['response', 'update'],
    description: 'reads spell customerId/subscriptionId/platformId, or customerID/... like BillingUpdate',
  },
  'non-member-reads': {
    values: ['refused', 'readable'],
    description: 'GetOrganisation of an organisation the user is not a member of answers 404, or 200',
  },
  'membership-lag': {
    values: ['0', 'N'],
    description: 'after AcceptInvitation, the next N reads (GetOrganisation, listings) do not show the membership yet',
  },
  'gateway-404': {
    values: ['off', 'v2-once', 'v2'],
    description: 'a gateway answers requests under /api/v2 with an HTML 404: never, the first per path, or always',
  },
  'empty-pages': {
    values: ['none', 'one', 'every'],
    description: 'GetOrganisations answers an empty page that links on, before the second page (one) or before every page after the first',
  },
  'fresh-cursors': {
    values: ['off', 'on'],
    description: 'listing cursors are new text each time they are issued, for the same position too (as encrypted cursors are)',
  },
};

export const POINT_NAMES: readonly PointName[] = Object.freeze(Object.keys(POINTS) as PointName[]);

export const PROFILES: { readonly [K in ProfileName]: Readonly<Behaviour> } = {
  lenient: Object.freeze({
    'billing-put': 'merge',
    'page-size': 'client',
    'next-link': 'cursor',
    'last-next': 'omit',
    'success-body': 'decided',
    'repeat-delete': 'not-found',
    'gone-channel': 'not-found',
    'extra-fields': 'off',
    'retry-after': 'seconds',
    'listing-billing': 'full',
    'read-spelling': 'response',
    'non-member-reads': 'refused',
    'membership-lag': 0,
    'gateway-404': 'off',
    'empty-pages': 'none',
    'fresh-cursors': 'off',
  }),
  strict: Object.freeze({
    'billing-put': 'replace',
    'page-size': 'fixed-50',
    'next-link': 'absolute',
    'last-next': 'empty',
    'success-body': 'mixed',
    'repeat-delete': 'not-found',
    'gone-channel': 'gone',
    'extra-fields': 'on',
    'retry-after': 'http-date',
    'listing-billing': 'omitted',
    'read-spelling': 'update',
    'non-member-reads': 'readable',
    'membership-lag': 2,
    'gateway-404': 'v2-once',
    'empty-pages': 'one',
    'fresh-cursors': 'on',
  }),
};

export const PROFILE_NAMES: readonly ProfileName[] = Object.freeze(Object.keys(PROFILES) as ProfileName[]);

const MAX_LAG = 1_000_000;

function isPointName(name: string): name is PointName {
  return Object.hasOwn(POINTS, name);
}

function unknownPoint(name: string): string {
  return `Unknown behaviour point "${name}"; the points are ${POINT_NAMES.join(', ')}.`;
}

function allowedValues(name: PointName): string {
  return name === 'membership-lag' ? 'a whole number (0 for none)' : POINTS[name].values.join(' | ');
}

/** Undefined when `value` is allowed for `name`, else what is wrong. */
function checkValue(name: PointName, value: unknown): string | undefined {
  const ok =
    name === 'membership-lag'
      ? typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_LAG
      : typeof value === 'string' && POINTS[name].values.includes(value);
  return ok ? undefined : `Behaviour point ${name} takes ${allowedValues(name)} (got ${JSON.stringify(value)}).`;
}

/**
 * The profile (default lenient) with `overrides` on top, every value checked; throws a TypeError
 * naming the allowed profiles, points or values.
 */
export function resolveBehaviour(profile: ProfileName = 'lenient', overrides: Partial<Behaviour> = {}): Behaviour {
  if (!Object.hasOwn(PROFILES, profile)) {
    throw new TypeError(`Unknown behaviour profile ${JSON.stringify(profile)}; the profiles are ${PROFILE_NAMES.join(', ')}.`);
  }
  const behaviour: Behaviour = { ...PROFILES[profile] };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!isPointName(name)) throw new TypeError(unknownPoint(name));
    const problem = checkValue(name, value);
    if (problem) throw new TypeError(problem);
    (behaviour as unknown as Record<string, unknown>)[name] = value;
  }
  return behaviour;
}

/** `NAME=VALUE` as given to --point, as an override; throws a TypeError naming what is allowed. */
export function parsePointAssignment(text: string): Partial<Behaviour> {
  const eq = text.indexOf('=');
  if (eq < 0) throw new TypeError(`A behaviour point is set as NAME=VALUE (got "${text}"); the points are ${POINT_NAMES.join(', ')}.`);
  const name = text.slice(0, eq).trim();
  const raw = text.slice(eq + 1).trim();
  if (!isPointName(name)) throw new TypeError(unknownPoint(name));
  const value: unknown = name === 'membership-lag' && /^\d{1,9}$/.test(raw) ? Number(raw) : raw;
  const problem = checkValue(name, value);
  if (problem) throw new TypeError(problem);
  return { [name]: value } as Partial<Behaviour>;
}

/** The points set differently from `profile`, as NAME=VALUE. */
export function describeOverrides(behaviour: Behaviour, profile: ProfileName = 'lenient'): string[] {
  return POINT_NAMES.filter((name) => behaviour[name] !== PROFILES[profile][name]).map((name) => `${name}=${behaviour[name]}`);
}

/** The --help listing of `orgform emulator`: the profiles and every point with its values and strict's. */
export function describeBehaviourHelp(): string {
  const width = Math.max(...POINT_NAMES.map((n) => n.length));
  const lines = [
    'Profiles (--profile NAME):',
    "  lenient  the project's decisions (default): the first value of every point below",
    '  strict   the least convenient plausible answer of every point (the value in [strict: ...])',
    '',
    'Behaviour points (--point NAME=VALUE, repeatable, on top of the profile):',
  ];
  for (const name of POINT_NAMES) {
    const values = name === 'membership-lag' ? '0 | N (a whole number)' : POINTS[name].values.join(' | ');
    lines.push(`  ${name.padEnd(width)}  ${values}  [strict: ${PROFILES.strict[name]}]`);
    lines.push(`  ${''.padEnd(width)}  ${POINTS[name].description}`);
  }
  return `\n${lines.join('\n')}\n`;
}
