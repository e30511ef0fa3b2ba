/**
 * The file state's lock table: shards of one count hold it at once, everything else that would
 * overlap a live run is refused naming it, holders found gone are dropped, force-unlock breaks one
 * holder only, and a holder broken while it runs stops before its next append.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { OrgformError } from '../../../src/errors.js';
import { journalKey } from '../../../src/model/journal-key.js';
import type { LockEnvironment } from '../../../src/state/lock-environment.js';
import type { Partition } from '../../../src/state/state-backend.js';
import { fileState, lockFileState, lockPathFor, readJournalFile } from '../../support/file-state.js';
import { rejection } from '../../support/rejection.js';
import { makeWorkspace } from '../../support/workspace.js';

const SERVICE = 'https://orgs.example.test';
const entry = { kind: 'remove-channel' as const, organisation: 'acme', outcome: 'applied' as const, at: '2026-01-01T00:00:00.000Z' };

let dir: string;
let statePath: string;
beforeEach(async () => {
  dir = await makeWorkspace();
  statePath = join(dir, 'state.json');
});

function env(parts: Partial<LockEnvironment> = {}): LockEnvironment {
  return { pid: 4242, host: 'runner-1', now: () => Date.parse('2026-03-04T05:06:07.000Z'), isAlive: () => true, ...parts };
}

const shard = (index: number, count: number): { partition: Partition } => ({ partition: { index, count } });

describe('the file lock table', () => {
  it('holds shards of one count at once, naming each holder; the top-level fields are one holder’s, as an older orgform reads them', async () => {
    const one = await lockFileState(statePath, { env: env(), ...shard(1, 2) });
    const two = await lockFileState(statePath, { env: env({ pid: 4343 }), ...shard(2, 2) });
    const table = JSON.parse(await readFile(lockPathFor(statePath), 'utf8'));
    expect(table).toMatchObject({ version: 2, id: one.lock.id, pid: 4242, host: 'runner-1', command: 'orgform apply (test)' });
    expect(table.holders.map((h: { id: string; partition: Partition }) => [h.id, h.partition])).toEqual([
      [one.lock.id, { index: 1, count: 2 }],
      [two.lock.id, { index: 2, count: 2 }],
    ]);
    await one.release();
    expect(JSON.parse(await readFile(lockPathFor(statePath), 'utf8'))).toMatchObject({ id: two.lock.id, pid: 4343 });
    await two.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    ['the same shard twice', shard(1, 2), shard(1, 2), 'shard 1/2 runs already'],
    ['a shard of another count', shard(1, 2), shard(1, 3), 'shard 1/2 runs, and shard 1/3 of another count would overlap it'],
    ['the whole state while a shard runs', shard(2, 2), {}, 'shard 2/2 runs, and an apply without --shard would overlap every shard'],
    ['a shard while the whole state is held', {}, shard(1, 2), ''],
    ['the whole state twice', {}, {}, ''],
  ] as const)('refuses %s, naming the holder and how to break its lock', async (_name, first, second, why) => {
    const held = await lockFileState(statePath, { env: env(), ...first });
    try {
      const err = await rejection(lockFileState(statePath, { env: env({ pid: 4343 }), ...second }));
      expect(err.code).toBe('STATE_LOCKED');
      expect(err.message).toContain(`The state at ${statePath} is locked by pid 4242 on runner-1 as test, running "orgform apply (test)"`);
      expect(err.message).toContain(`(lock ID ${held.lock.id})${why === '' ? '.' : `: ${why}`}`);
      expect(err.message).toContain(`if it is gone for good, run: orgform force-unlock ${held.lock.id} --state ${statePath}`);
    } finally {
      await held.release();
    }
    expect(existsSync(lockPathFor(statePath))).toBe(false);
  });

  it('drops holders whose process is gone on this host, and says which; never another host’s', async () => {
    const gone = await lockFileState(statePath, { env: env({ pid: 1111 }), ...shard(1, 2) });
    const elsewhere = await lockFileState(statePath, { env: env({ pid: 1111, host: 'runner-2' }), ...shard(2, 2) });
    const taken = await fileState(statePath, env({ isAlive: (pid) => pid !== 1111 })).lock(
      { command: 'orgform apply', pid: 4242, host: 'runner-1', who: 'ada', startedAt: '2026-01-01T00:00:00.000Z', partition: { index: 1, count: 2 } },
      { targets: new Set() },
    );
    expect(taken.replaced.map((h) => h.id)).toEqual([gone.lock.id]);
    const table = JSON.parse(await readFile(lockPathFor(statePath), 'utf8'));
    expect(table.holders.map((h: { id: string }) => h.id)).toEqual([elsewhere.lock.id, taken.lock.id]);
    await taken.release();
    await elsewhere.release();
  });

  it('respects a lock file an older orgform holds, naming it, and takes one over whose process is gone', async () => {
    await writeFile(lockPathFor(statePath), JSON.stringify({ id: 'old0000000ab', pid: 777, host: 'runner-1', startedAt: '2026-01-01T00:00:00Z', command: 'orgform apply' }));
    const err = await rejection(lockFileState(statePath, { env: env(), ...shard(1, 2) }));
    expect(err.message).toContain('is locked by pid 777 on runner-1, running "orgform apply" since 2026-01-01T00:00:00Z (lock ID old0000000ab)');
    const held = await lockFileState(statePath, { env: env({ isAlive: (pid) => pid !== 777 }) });
    expect(held.replaced).toMatchObject([{ id: 'old0000000ab', pid: 777 }]);
    await held.release();
  });

  it('takes over the gate a killed process left; waits for a live one’s at most 5 s, then says whose it is and what to do', async () => {
    const gate = `${statePath}.lock.gate`;
    await writeFile(gate, JSON.stringify({ id: 'gate00000001', pid: 999, host: 'runner-1' }));
    const held = await lockFileState(statePath, { env: env({ isAlive: (pid) => pid !== 999 }) });
    await held.release();
    expect(existsSync(gate)).toBe(false);

    await writeFile(gate, JSON.stringify({ id: 'gate00000002', pid: 998, host: 'runner-1' }));
    let clock = 0;
    const err = await rejection(lockFileState(statePath, { env: env({ now: () => (clock += 1_000) }) }));
    expect(err.message).toBe(
      `The lock table of the state ${statePath} has been held by pid 998 on runner-1 for over 5 s (${gate}), a change that takes milliseconds. Nothing was changed. If no orgform runs on this state, delete ${gate} and run again.`,
    );
    expect((await readdir(dir)).sort()).toEqual(['state.json.lock.gate']);
  });

  it('refuses a lock table it cannot read, saying how to recover', async () => {
    await writeFile(lockPathFor(statePath), '{"version": 2, "holders": [');
    const err = await rejection(lockFileState(statePath, { env: env() }));
    expect(err.message).toBe(
      `The state ${statePath} is locked by an unreadable lock file ${lockPathFor(statePath)} (an orgform may be starting, or one stopped while taking the lock). If no orgform runs on this state, delete ${lockPathFor(statePath)} and run again.`,
    );
  });
});

describe('force-unlock on a file state', () => {
  it('breaks the lock with that ID only: the other shard keeps its own', async () => {
    const one = await lockFileState(statePath, { env: env(), ...shard(1, 2) });
    const two = await lockFileState(statePath, { env: env({ pid: 4343 }), ...shard(2, 2) });
    expect(await fileState(statePath, env()).forceUnlock(one.lock.id)).toMatchObject({ id: one.lock.id, pid: 4242, partition: { index: 1, count: 2 } });
    const table = JSON.parse(await readFile(lockPathFor(statePath), 'utf8'));
    expect(table.holders.map((h: { id: string }) => h.id)).toEqual([two.lock.id]);
    // The broken shard may run again.
    const again = await lockFileState(statePath, { env: env(), ...shard(1, 2) });
    await again.release();
    await two.release();
  });

  it('refuses an ID no holder has, naming the holders, and says when there is no lock at all', async () => {
    expect((await rejection(fileState(statePath, env()).forceUnlock('0123456789ab'))).message).toBe(`There is no lock on ${statePath} (no holder in ${lockPathFor(statePath)}). Nothing was changed.`);
    const one = await lockFileState(statePath, { env: env(), ...shard(1, 2) });
    expect((await rejection(fileState(statePath, env()).forceUnlock('0123456789ab'))).message).toContain(`The lock on ${statePath} has ID ${one.lock.id}, not 0123456789ab; it is held by pid 4242 on runner-1`);
    const two = await lockFileState(statePath, { env: env({ pid: 4343 }), ...shard(2, 2) });
    const both = (await rejection(fileState(statePath, env()).forceUnlock('0123456789ab'))).message;
    expect(both).toContain(`No lock on ${statePath} has ID 0123456789ab; it is held by pid 4242`);
    expect(both).toContain(`(lock ID ${two.lock.id})`);
    await one.release();
    await two.release();
  });

  it('stops a run whose lock was broken before its next append: the record is refused, the loss told, nothing appended', async () => {
    const held = await lockFileState(statePath, { env: env() });
    const lost: OrgformError[] = [];
    held.onLost((error) => lost.push(error));
    await held.journal.record(SERVICE, journalKey('remove-channel', 'o1', 'c1'), entry);
    await fileState(statePath, env()).forceUnlock(held.lock.id);
    const err = await rejection(held.journal.record(SERVICE, journalKey('remove-channel', 'o2', 'c2'), entry));
    expect(err.code).toBe('STATE_LOCK_LOST');
    expect(err.message).toContain(`the lock ${held.lock.id} was broken (orgform force-unlock)`);
    expect(lost.map((e) => e.code)).toEqual(['STATE_LOCK_LOST']);
    await held.release();
    expect(Object.keys((await readJournalFile(statePath)).services[SERVICE] ?? {})).toEqual([journalKey('remove-channel', 'o1', 'c1')]);
  });

  it('tells a run whose lock was broken when it asks before its next change, with no record to make: the loss, once', async () => {
    const held = await lockFileState(statePath, { env: env() });
    const lost: OrgformError[] = [];
    held.onLost((error) => lost.push(error));
    await held.journal.checkHeld!();
    await fileState(statePath, env()).forceUnlock(held.lock.id);
    const err = await rejection(held.journal.checkHeld!());
    expect(err.code).toBe('STATE_LOCK_LOST');
    expect(err.message).toContain(`the lock ${held.lock.id} was broken (orgform force-unlock)`);
    expect((await rejection(held.journal.checkHeld!())).message).toBe(err.message);
    expect(lost.map((e) => e.code)).toEqual(['STATE_LOCK_LOST']);
    await held.release();
  });
});

describe('the directory of a file state', () => {
  it('is made for the lock and removed again when nothing was recorded; one that was there, or holds the journal, stays', async () => {
    const inside = join(dir, 'deep', 'er', 'state.json');
    await (await lockFileState(inside, { env: env() })).release();
    expect(existsSync(join(dir, 'deep'))).toBe(false);
    const held = await lockFileState(inside, { env: env() });
    await held.journal.record(SERVICE, journalKey('remove-channel', 'o1', 'c1'), entry);
    await held.release();
    expect(await readdir(join(dir, 'deep', 'er'))).toEqual(['state.json']);
    await mkdir(join(dir, 'there'));
    await (await lockFileState(join(dir, 'there', 'state.json'), { env: env() })).release();
    expect(existsSync(join(dir, 'there'))).toBe(true);
  });
});
