/**
 * One change against the service, with the idempotent outcomes that make apply safe to run again:
 * a delete answered 410, or 404 with the service's Error body while you are a member, is done; an
 * accept whose answer was lost or "not found" is done only if the listing shows you a member; a
 * billing change planned "known after" the accept reads the organisation first and writes only
 * what it read or was declared.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, isForbidden, isNotFound, TransportError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import { observeBilling } from '../api/observe-billing.js';
import { differingFields, fullBillingUpdate, type BillingDetails } from '../model/billing.js';
import type { ApplicableChange } from '../plan/types.js';
import type { Outcome } from './events.js';

export interface ExecutionResult {
  outcome: Extract<Outcome, 'applied' | 'already-done'>;
  reason?: string;
}

/** Thrown when a change failed; `cause` is the service's or the transport's error. */
export class ChangeFailedError extends Error {
  constructor(
    readonly operation: string,
    message: string,
    readonly underlying: unknown,
  ) {
    super(message);
    this.name = 'ChangeFailedError';
  }
}

export interface ExecuteOptions {
  /** Waits between the re-reads that give a just-joined membership time to show; injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** First step of those waits, doubling (the retry policy's base: ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
}

export const DEFAULT_BACKOFF_BASE_MS = 250;

/** Re-reads after an accept: a service may take a moment to show a new membership (4 waits, doubling). */
const SETTLE_STEPS = [1, 2, 4, 8];
/** Retries of a 404 that did not come from the service (no Error body: a proxy or gateway). */
const FOREIGN_404_STEPS = [2, 4];

interface Waits {
  sleep: (ms: number) => Promise<void>;
  settle: number[];
  foreign404: number[];
}

const defaultSleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

function describeError(err: unknown): string {
  return err instanceof ApiError ? `HTTP ${err.status}${err.serviceCode ? ` ${err.serviceCode}` : ''}` : (err as Error).message;
}

/**
 * Membership as the listing shows it: a service may let non-members read an organisation, so a
 * successful GetOrganisation proves nothing. The listing filtered by slug is one small request.
 */
async function isMember(client: OrganisationsClient, organisationId: string, slug: string): Promise<{ ok: true } | { ok: false; why: string }> {
  try {
    for await (const org of client.listOrganisations({ filter: slug })) if (org.id === organisationId) return { ok: true };
    return { ok: false, why: 'it is not among your organisations' };
  } catch (err) {
    return { ok: false, why: describeError(err) };
  }
}

/** Retries `attempt` while it says no, for a membership or organisation that may not show at once. */
async function settle<T extends { ok: boolean }>(attempt: () => Promise<T>, waits: Waits): Promise<T> {
  let result = await attempt();
  for (const delay of waits.settle) {
    if (result.ok) break;
    await waits.sleep(delay);
    result = await attempt();
  }
  return result;
}

/** A 404 carries the service's Error body when the service itself says "not found". */
function isServiceNotFound(err: unknown): boolean {
  return isNotFound(err) && err.serviceCode !== undefined;
}

export async function executeChange(change: ApplicableChange, client: OrganisationsClient, options: ExecuteOptions = {}): Promise<ExecutionResult> {
  const base = options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const waits: Waits = { sleep: options.sleep ?? defaultSleep, settle: SETTLE_STEPS.map((n) => n * base), foreign404: FOREIGN_404_STEPS.map((n) => n * base) };
  const orgId = change.organisation.id;
  const slug = change.organisation.slug;
  const target = change.targetId ?? '';
  // Retries of this change's requests are reported under its address.
  const label = change.address;
  switch (change.kind) {
    case 'billing': {
      const request = change.request ?? (await billingAfterJoin(change, client, waits));
      if (request === undefined) return { outcome: 'already-done', reason: 'the billing read after joining already holds the declared values' };
      await client.updateBillingDetails(orgId, request, { idempotencyKey: randomUUID(), label });
      return { outcome: 'applied' };
    }
    case 'set-active':
      await client.setActiveOrganisation(orgId, { idempotencyKey: randomUUID(), label });
      return { outcome: 'applied' };
    case 'accept-invitation':
      try {
        await client.acceptInvitation(orgId, target, { idempotencyKey: randomUUID(), label });
      } catch (err) {
        if (!isNotFound(err) && !(err instanceof TransportError)) throw err;
        // The first attempt may have been applied and its answer lost: membership tells.
        const member = await settle(() => isMember(client, orgId, slug), waits);
        if (member.ok) return { outcome: 'already-done', reason: 'the invitation is no longer pending and you are a member of the organisation' };
        throw new ChangeFailedError(
          'acceptInvitation',
          `${(err as Error).message}; and you are not a member of organisation ${JSON.stringify(orgId)} (${member.why}), so the invitation was not accepted`,
          err,
        );
      }
      // Wait (bounded) until the listing shows the membership, so that the next plan, which takes
      // membership from the listing, agrees with what was just done. Accepted either way.
      await settle(() => isMember(client, orgId, slug), waits);
      return { outcome: 'applied' };
    case 'revoke-invitation':
    case 'remove-channel':
      return deleteTarget(change, client, waits);
    default: {
      const unreachable: never = change.kind;
      throw new Error(`unknown change kind ${String(unreachable)}`);
    }
  }
}

async function deleteTarget(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<ExecutionResult> {
  const orgId = change.organisation.id;
  const target = change.targetId ?? '';
  const label = change.address;
  const send = () =>
    change.kind === 'revoke-invitation' ? client.deleteInvitation(orgId, target, { label }) : client.deleteNotificationChannel(orgId, target, { label });
  for (let retry = 0; ; retry += 1) {
    try {
      await send();
      return { outcome: 'applied' };
    } catch (err) {
      if (err instanceof ApiError && err.status === 410) return { outcome: 'already-done', reason: 'the service says it is gone (HTTP 410)' };
      if (!isNotFound(err)) throw err;
      if (!isServiceNotFound(err)) {
        // No Error body: a proxy or gateway answered, not the service. Nothing says the target is gone.
        const delay = waits.foreign404[retry];
        if (delay !== undefined) {
          await waits.sleep(delay);
          continue;
        }
        throw new ChangeFailedError(
          err.operation,
          `${err.message}; a 404 without the service's Error body comes from something in front of the service (a proxy or gateway), so this is not counted as done. Check the base URL and the route to ${change.kind === 'remove-channel' ? '/api/v2' : '/api/organisations/v1'}, then run apply again`,
          err,
        );
      }
      // Gone already (perhaps by our own earlier attempt whose answer was lost), but only while
      // you are still a member; otherwise the 404 may mean no access.
      const member = await isMember(client, orgId, change.organisation.slug);
      if (member.ok) return { outcome: 'already-done', reason: 'found already gone' };
      throw new ChangeFailedError(
        err.operation,
        `${err.message}; and you are not a member of organisation ${JSON.stringify(orgId)} (${member.why}), so this is not counted as done`,
        err,
      );
    }
  }
}

/**
 * The billing body of an organisation joined by this apply: read it now that the accept has
 * succeeded, and put the declared fields over what was read. Undefined when nothing differs.
 */
async function billingAfterJoin(change: ApplicableChange, client: OrganisationsClient, waits: Waits): Promise<BillingDetails | undefined> {
  const orgId = change.organisation.id;
  const declared = change.declared;
  if (declared === undefined) throw new Error(`plan change ${change.address} has neither a request nor declared values`);
  const read = await settle(async () => {
    try {
      return { ok: true as const, org: await client.getOrganisation(orgId) };
    } catch (err) {
      if (isNotFound(err) || isForbidden(err)) return { ok: false as const, err };
      throw err;
    }
  }, waits).catch((err: unknown) => ({ ok: false as const, err }));
  // Starts with the underlying error's message, so that the views show the service's answer and then this.
  const failed = (why: string, err?: unknown) =>
    new ChangeFailedError(
      'getOrganisation',
      `${err instanceof Error ? `${err.message}; ` : ''}the billing of organisation ${JSON.stringify(change.organisation.slug)} (${orgId}) must be read before it is written, and ${why}. Nothing was written; run orgform apply again once the organisation can be read`,
      err,
    );
  if (!read.ok) throw failed('it could not be read after the accept', read.err);
  const billing = observeBilling(read.org.billing, true);
  if (!billing.known) throw failed(`it cannot be read (${billing.reason})`);
  if (differingFields(declared, billing.values).length === 0) return undefined;
  return fullBillingUpdate(declared, billing.values);
}
