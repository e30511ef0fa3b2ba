/**
 * The Terraform HTTP state's writes (src/state/http/document-writer.ts) against a backend that plays
 * GitLab and Gitea (test/support/terraform-http-backend.mjs), including one that stores any write
 * whoever holds the lock: shards take turns on one document, and a run whose lock was broken, or
 * whose document someone else wrote, stops before it overwrites anyone.
 */
import { describe, expect, it } from 'vitest';
import { DocumentWriter } from '../../../src/state/http/document-writer.js';
import type { LoggedEntry } from '../../../src/state/journal-entry.js';
import type { LockHolder, Partition } from '../../../src/state/state-backend.js';
import { rejection } from '../../support/rejection.js';
import { startBackend } from '../../support/terraform-backends.js';
import type { TerraformBackend } from '../../support/terraform-http-backend.mjs';
import { fetchPort } from './document-port.js';

const PATH = '/api/packages/ops/terraform/state/orgform';
const SERVICE = 'https://orgs.example.test';


let runs = 0;
function run(partition?: Partition, pid = 100 + runs): LockHolder {
  runs += 1;
  return { id: `run${String(runs).padStart(9, '0')}`, pid, host: 'runner-1', who: 'ci@runner-1', command: 'orgform apply', startedAt: '2025-03-04T05:06:07.000Z', ...(partition === undefined ? {} : { partition }) };
}

const batch = (...ns: number[]): LoggedEntry[] => ns.map((n) => ({ service: SERVICE, key: `remove-channel org_${n} chn_${n}`, entry: { kind: 'remove-channel', organisation: `org-${n}`, outcome: 'applied', at: '2025-01-02T03:04:05.000Z' } }));

function writer(server: TerraformBackend, options: Partial<ConstructorParameters<typeof DocumentWriter>[1]> = {}) {
  const port = fetchPort(server.url + PATH);
  return new DocumentWriter(port, { location: server.url + PATH, timeoutMs: 2_000, isGone: () => false, ...options });
}

/** The keys the stored document holds now. */
const stored = (server: TerraformBackend) => Object.keys(JSON.parse(server.versions(PATH).at(-1)!.body).orgform.services[SERVICE] ?? {}).sort();

describe('the Terraform HTTP state’s writes', () => {
  it('lets shards of one count write one document in turn, each under the server’s lock for the moment of its write only', async () => {
    const server = await startBackend();
    const [one, two] = [run({ index: 1, count: 2 }), run({ index: 2, count: 2 })];
    const [a, b] = [writer(server), writer(server)];
    await a.register(one);
    await b.register(two);
    await Promise.all([a.write(one, batch(1, 3)), b.write(two, batch(2, 4)), a.write(one, batch(5)), b.write(two, batch(6))]);
    expect(server.lockOf(PATH)).toBeNull();
    expect(stored(server)).toEqual(batch(1, 2, 3, 4, 5, 6).map((e) => e.key).sort());
    await Promise.all([a.unregister(one), b.unregister(two)]);
    const last = JSON.parse(server.versions(PATH).at(-1)!.body);
    expect(last.orgform.runs).toBeUndefined();
    expect(server.versions(PATH).map((v) => v.serial)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('refuses the same shard, an unsharded run while shards run, and a shard of another count, naming the registered run', async () => {
    const server = await startBackend();
    const first = run({ index: 1, count: 2 });
    await writer(server).register(first);
    for (const [asked, why] of [
      [{ index: 1, count: 2 }, 'shard 1/2 runs already'],
      [undefined, 'an apply without --shard would overlap every shard'],
      [{ index: 1, count: 3 }, 'shard 1/3 of another count would overlap it'],
    ] as const) {
      const err = await rejection(writer(server).register(run(asked)));
      expect(err.code).toBe('STATE_LOCKED');
      expect(err.message).toContain(`is locked by pid ${first.pid} on runner-1 as ci@runner-1, running "orgform apply" (shard 1/2) since 2025-03-04T05:06:07.000Z (lock ID ${first.id}): `);
      expect(err.message).toContain(why);
    }
    expect(server.lockOf(PATH)).toBeNull();
  });

  it('stops a run whose lock was broken, before it overwrites the next run’s entries, on a server that stores any write', async () => {
    const server = await startBackend({ flavour: 'gitea', enforceLocks: false });
    const [a, b] = [run(), run()];
    const writerA = writer(server);
    await writerA.register(a);
    await writerA.write(a, batch(1));
    // A looks stuck: someone breaks its lock; B runs and ends.
    expect((await writer(server).forceUnlock(a.id, { who: 'ops' })).id).toBe(a.id);
    const writerB = writer(server);
    await writerB.register(b);
    await writerB.write(b, batch(2, 3));
    await writerB.unregister(b);
    // A wakes up with a batch to write.
    const err = await rejection(writerA.write(a, batch(4)));
    expect(err.code).toBe('STATE_LOCK_LOST');
    expect(err.message).toContain('this run is no longer registered in the state: its lock was broken (force-unlock)');
    expect(stored(server)).toEqual(batch(1, 2, 3).map((e) => e.key).sort());
  });

  it('stops a run holding the whole state when someone else wrote its document meanwhile (the serial moved)', async () => {
    const server = await startBackend({ flavour: 'gitea', enforceLocks: false });
    const a = run();
    const writerA = writer(server);
    await writerA.register(a);
    const theirs = JSON.parse(server.versions(PATH).at(-1)!.body);
    server.store(PATH, JSON.stringify({ ...theirs, serial: theirs.serial + 1 }));
    const err = await rejection(writerA.write(a, batch(1)));
    expect(err.message).toContain(`someone else wrote the state meanwhile (its serial is ${theirs.serial + 1}, not ${theirs.serial}`);
    expect(server.versions(PATH)).toHaveLength(2);
  });

  it('stops a run whose state was replaced by another of the same name (another lineage)', async () => {
    const server = await startBackend();
    const a = run();
    const writerA = writer(server);
    const { doc } = await writerA.register(a);
    server.store(PATH, JSON.stringify({ ...JSON.parse(server.versions(PATH).at(-1)!.body), lineage: 'a-new-one' }));
    const err = await rejection(writerA.write(a, batch(1)));
    expect(err.message).toContain(`the state was replaced meanwhile (its lineage is a-new-one, not ${doc.lineage})`);
  });

  it('waits while another run’s write holds the server’s lock, and after ORGFORM_STATE_TIMEOUT_MS names it', async () => {
    const server = await startBackend();
    const a = run();
    const port = fetchPort(server.url + PATH);
    let clock = 0;
    const waits: number[] = [];
    const writerA = new DocumentWriter(port, {
      location: 'the state',
      timeoutMs: 5_000,
      isGone: () => false,
      now: () => clock,
      random: () => 1,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
        // Another run's write ends while this one waits (the second wait).
        if (waits.length === 2) await port.unlock('mallory-write');
      },
    });
    server.takeLock(PATH, 'mallory-write', 'mallory');
    await writerA.register(a);
    expect(waits).toEqual([100, 200]);

    server.takeLock(PATH, 'stuck-write', 'mallory');
    waits.length = 0;
    const err = await rejection(writerA.write(a, batch(1)));
    expect(err.message).toContain('stayed locked by mallory (lock ID stuck-write) for ORGFORM_STATE_TIMEOUT_MS (5000 ms) while writing a batch of 1');
    expect(err.message).toContain('orgform force-unlock stuck-write');
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeLessThanOrEqual(5_000);
  });

  it('drops the registration of a run whose process is gone from this host, and says so', async () => {
    const server = await startBackend();
    const dead = run({ index: 1, count: 2 }, 999_999);
    await writer(server).register(dead);
    const { replaced } = await writer(server, { isGone: (holder) => holder.pid === 999_999 }).register(run({ index: 1, count: 2 }));
    expect(replaced.map((h) => h.id)).toEqual([dead.id]);
  });

  it('breaks the lock of a run killed in the middle of a write: the server’s lock and its registration', async () => {
    const server = await startBackend();
    const killed = run({ index: 2, count: 2 });
    await writer(server).register(killed);
    server.takeLock(PATH, killed.id, 'gitlab-ci-token');
    const other = run({ index: 1, count: 2 });
    const breaker = writer(server);
    expect(await breaker.forceUnlock(killed.id, { who: 'ops' })).toMatchObject({ id: killed.id, partition: { index: 2, count: 2 } });
    expect(server.lockOf(PATH)).toBeNull();
    await writer(server).register(run({ index: 2, count: 2 }));
    const wrong = await rejection(breaker.forceUnlock('0123456789ab', { who: 'ops' }));
    expect(wrong.message).toContain('has no lock with ID 0123456789ab; it is held by pid');
    expect(other.id).not.toBe(killed.id);
  });
});
