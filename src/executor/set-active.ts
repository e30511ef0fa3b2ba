/**
 * Setting the active organisation, only while the service still has active the one the plan read
 * (`activeFrom`): read again just before the write, as the plan read it (the first organisation of
 * the unfiltered listing's first page, which the interface says is always the active one). One made
 * active by someone else since the plan makes the change stale: the write would replace a choice
 * nobody reviewed (the plan showed "from" the one it read). One already active is done. The write
 * goes out within the send window after that read, or is read and built again.
 */
import { randomUUID } from 'node:crypto';
import { NotSentError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import type { ApplicableChange } from '../plan/types.js';
import { APPLIED, ChangeFailedError, errorMessage, READ_AGAIN, READ_AGAIN_LATE, type ChangeOutcome } from './change-outcome.js';
import { staleReason } from './write-billing.js';

export interface ActiveContext {
  client: OrganisationsClient;
  now: () => number;
  /** How long after its read a write may still be sent. */
  sendWindowMs: number;
}

/** `activeFrom`: the id of the organisation active when the plan was read (null: none). */
export async function setActive(change: ApplicableChange, context: ActiveContext, activeFrom: string | null): Promise<ChangeOutcome> {
  const { id } = change.organisation;
  const read = await readActive(context.client);
  if (read.active === id) return { kind: 'already-done', reason: 'the organisation is already the active one' };
  if (read.active !== activeFrom) {
    return {
      kind: 'stale',
      reason: staleReason(`the active organisation changed on the service since the plan, from ${show(activeFrom)} to ${show(read.active)}, so setting ${show(id)} would replace a choice the plan did not show`),
    };
  }
  const late = context.now() - read.readAt > context.sendWindowMs;
  try {
    await context.client.setActiveOrganisation(id, { idempotencyKey: randomUUID(), label: change.address, notAfter: read.readAt + context.sendWindowMs });
  } catch (err) {
    if (err instanceof NotSentError && err.readTooOld) return late ? READ_AGAIN_LATE : READ_AGAIN;
    throw err;
  }
  return APPLIED;
}

async function readActive(client: OrganisationsClient): Promise<{ active: string | null; readAt: number }> {
  try {
    for await (const page of client.listOrganisationPages({ pageSize: 1 })) return { active: page.organisations[0]?.id ?? null, readAt: page.sentAt };
  } catch (err) {
    throw new ChangeFailedError(
      'getOrganisations',
      `${errorMessage(err)}; the active organisation is read again just before it is set, and that read failed, so it was not set: run orgform apply again`,
      err,
    );
  }
  throw new Error('the listing gave no page');
}

const show = (id: string | null) => (id === null ? '(none)' : JSON.stringify(id));
