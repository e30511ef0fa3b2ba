/**
 * Applies a plan: organisations in parallel (bounded), each organisation's changes in order
 * (accept, billing, revocations, channel removals), the active organisation last, after its own
 * organisation's changes. A failure skips only what depends on it. One-shot changes are written
 * to the journal as soon as they complete. On interrupt, nothing new starts and what is in flight
 * finishes.
 */
import { ApiError } from '../api/api-error.js';
import type { OrganisationsClient } from '../api/client.js';
import type { Change } from '../plan/types.js';
import { journalKey, type Journal } from '../state/journal.js';
import type { ApplyListener, ApplySummary, ChangeFailure, ChangeResult } from './events.js';
import { ChangeFailedError, executeChange } from './execute-change.js';

export interface ApplyOptions {
  client: OrganisationsClient;
  journal: Journal;
  /** The journal's key for this service (its base URL). */
  service: string;
  parallelism: number;
  signal?: AbortSignal;
  onEvent?: ApplyListener;
  now?: () => number;
  /** Waits between re-reads inside a change (a membership that takes a moment to show); injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  /** First step of those waits, doubling; the retry policy's base (ORGFORM_RETRY_BASE_MS). */
  backoffBaseMs?: number;
}

const ONE_SHOT = new Set<Change['kind']>(['accept-invitation', 'revoke-invitation', 'remove-channel']);

function describeFailure(err: unknown): ChangeFailure {
  const underlying = err instanceof ChangeFailedError ? err.underlying : err;
  const operation = err instanceof ChangeFailedError ? err.operation : ((underlying as { operation?: string }).operation ?? 'unknown');
  const message = err instanceof Error ? err.message : String(err);
  if (underlying instanceof ApiError) {
    // A ChangeFailedError explains, after the service's error, why it is a failure.
    const explanation =
      err instanceof ChangeFailedError && message.startsWith(`${underlying.message}; `) ? message.slice(underlying.message.length + 2) : undefined;
    const note = [underlying.hint, explanation].filter((n): n is string => n !== undefined && n !== '').join('; ');
    return {
      operation,
      message,
      status: underlying.status,
      serviceCode: underlying.serviceCode,
      serviceMessage: underlying.serviceMessage,
      serviceCause: underlying.serviceCause,
      ...(note === '' ? {} : { note }),
    };
  }
  return { operation, message };
}

export async function applyPlan(changes: readonly Change[], options: ApplyOptions): Promise<ApplySummary> {
  const now = options.now ?? Date.now;
  const started = now();
  const emit = options.onEvent ?? (() => undefined);
  const results = new Map<string, ChangeResult>();
  let interrupted = false;
  let inFlight = 0;
  const onAbort = () => {
    interrupted = true;
    emit({ type: 'interrupted', at: now(), inFlight });
  };
  // apply-start comes first, whatever happens: an interrupt before it is told right after it.
  emit({ type: 'apply-start', total: changes.length, parallelism: options.parallelism, at: started });
  // An apply with nothing to do leaves nothing undone: an interrupt then changes nothing about it.
  const signal = changes.length > 0 ? options.signal : undefined;
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });

  const finish = (change: Change, result: Omit<ChangeResult, 'address' | 'organisation' | 'kind'>) => {
    const full: ChangeResult = { address: change.address, organisation: change.organisation.slug, kind: change.kind, ...result };
    results.set(change.address, full);
    emit({ type: 'change-end', at: now(), ...full });
    return full;
  };

  /** Runs one change; returns false when it failed or did not run, so that dependants are skipped. */
  async function run(change: Change, blockedBy: string | undefined): Promise<boolean> {
    if (blockedBy !== undefined) {
      finish(change, { outcome: 'skipped', reason: `depends on ${blockedBy}, which did not complete`, durationMs: 0 });
      return false;
    }
    if (interrupted) {
      finish(change, { outcome: 'not-started', reason: 'apply was interrupted before it started', durationMs: 0 });
      return false;
    }
    const key = change.targetId === undefined ? undefined : journalKey(change.kind, change.organisation.id, change.targetId);
    if (key !== undefined && ONE_SHOT.has(change.kind) && options.journal.has(options.service, key)) {
      finish(change, { outcome: 'already-done', reason: 'recorded in the state journal', durationMs: 0 });
      return true;
    }
    const t0 = now();
    inFlight += 1;
    emit({ type: 'change-start', address: change.address, organisation: change.organisation.slug, kind: change.kind, at: t0 });
    try {
      const result = await executeChange(change, options.client, {
        ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
        ...(options.backoffBaseMs === undefined ? {} : { backoffBaseMs: options.backoffBaseMs }),
      });
      if (key !== undefined && ONE_SHOT.has(change.kind)) {
        await options.journal.record(options.service, key, {
          kind: change.kind,
          organisation: change.organisation.slug,
          outcome: result.outcome,
          at: new Date(now()).toISOString(),
        });
      }
      finish(change, { outcome: result.outcome, reason: result.reason, durationMs: now() - t0 });
      return true;
    } catch (err) {
      finish(change, { outcome: 'failed', failure: describeFailure(err), durationMs: now() - t0 });
      return false;
    } finally {
      inFlight -= 1;
    }
  }

  // Group by organisation, keeping plan order within each group; a set-active change waits for its
  // organisation's group.
  const groups = new Map<string, Change[]>();
  const activeChanges: Change[] = [];
  for (const change of changes) {
    if (change.kind === 'set-active') activeChanges.push(change);
    else {
      const list = groups.get(change.organisation.slug);
      if (list === undefined) groups.set(change.organisation.slug, [change]);
      else list.push(change);
    }
  }
  const activeBySlug = new Map<string, Change[]>();
  /** Set-active changes whose organisation's changes are done (or that have none): they start once no group is left. */
  const ready: Array<{ change: Change; blockedBy: string | undefined }> = [];
  for (const change of activeChanges) {
    if (!groups.has(change.organisation.slug)) ready.push({ change, blockedBy: undefined });
    else activeBySlug.set(change.organisation.slug, [...(activeBySlug.get(change.organisation.slug) ?? []), change]);
  }

  async function runGroup(slug: string, list: readonly Change[]): Promise<void> {
    let blockedBy: string | undefined;
    for (const change of list) {
      const ok = await run(change, blockedBy);
      // Without membership nothing else in the organisation can succeed. An accept that did not
      // start (interrupt) blocks nothing: what follows is "not started" too, not "skipped".
      const failed = results.get(change.address)?.outcome === 'failed';
      if (!ok && failed && change.kind === 'accept-invitation' && blockedBy === undefined) blockedBy = change.address;
    }
    for (const change of activeBySlug.get(slug) ?? []) ready.push({ change, blockedBy });
  }

  // `parallelism` workers share one queue of organisations, then of set-active changes. (One
  // p-limit task per organisation, all queued at once, held about 1 KB each until its turn: 100 MB
  // at 100,000 organisations.)
  const queue = groups.entries();
  async function worker(): Promise<void> {
    for (;;) {
      const next = queue.next();
      if (!next.done) {
        await runGroup(next.value[0], next.value[1]);
        continue;
      }
      const active = ready.shift();
      if (active === undefined) return;
      await run(active.change, active.blockedBy);
    }
  }
  const workers = Math.max(1, Math.min(options.parallelism, groups.size + activeChanges.length));
  await Promise.all(Array.from({ length: workers }, () => worker()));
  await options.journal.flush();
  signal?.removeEventListener('abort', onAbort);

  const ordered = changes.map((c) => results.get(c.address)).filter((r): r is ChangeResult => r !== undefined);
  const count = (outcome: ChangeResult['outcome']) => ordered.filter((r) => r.outcome === outcome).length;
  const summary: ApplySummary = {
    total: changes.length,
    applied: count('applied'),
    alreadyDone: count('already-done'),
    skipped: count('skipped'),
    notStarted: count('not-started'),
    failed: count('failed'),
    interrupted,
    elapsedMs: now() - started,
    results: ordered,
  };
  emit({ type: 'apply-end', at: now(), summary });
  return summary;
}
