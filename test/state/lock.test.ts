import * as fs from 'node:fs/promises';
import { unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { failNextFileWrite, failNextRename } from '../support/fail-next-file-write.js';
import { deadPid } from '../support/dead-pid.js';
import { rejection } from '../support/rejection.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acquireLock, forceUnlock, lockPathFor, type LockEnvironment, type LockInfo } from '../../src/state/lock.js';

// Pass-through spies, so that a test can make writing or moving the lock file fail.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open), rename: vi.fn(actual.rename) };
});

let dir: string;
let statePath: string;
let lockPath: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'orgform-lock-'));
  statePath = path.join(dir, 'orgform.state.json');
  lockPath = lockPathFor(statePath);
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const START = Date.parse('2025-03-04T05:06:07.000Z');

function lockEnv(parts: Partial<LockEnvironment> = {}): LockEnvironment {
  return { pid: 4242, host: 'runner-1', now: () => START, isAlive: () => true, ...parts };
}


const holderNow = async () => JSON.parse(await fs.readFile(lockPath, 'utf8')) as LockInfo;

describe('acquireLock', () => {
  it('writes a lock file beside the journal that names its holder', async () => {
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv());
    expect(lockPath).toBe(`${statePath}.lock`);
    expect(await holderNow()).toEqual({ id: lock.info.id, pid: 4242, host: 'runner-1', startedAt: '2025-03-04T05:06:07.000Z', command: 'orgform apply' });
    expect(lock.info.id).toMatch(/^[0-9a-f]{12}$/);
    expect(lock.replaced).toBeUndefined();
  });

  it('refuses a second holder, naming pid, host, start time, lock ID and the force-unlock command', async () => {
    const first = await acquireLock(statePath, 'orgform apply plan.json', lockEnv());
    const err = await rejection(acquireLock(statePath, 'orgform apply', lockEnv({ pid: 5555 })));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(`The state ${statePath} is locked by pid 4242 on runner-1`);
    expect(err.message).toContain('running "orgform apply plan.json" since 2025-03-04T05:06:07.000Z');
    expect(err.message).toContain(`(lock ID ${first.info.id})`);
    expect(err.message).toContain(`orgform force-unlock ${first.info.id} --state ${statePath}`);
    expect((await holderNow()).id).toBe(first.info.id);
  });

  it('refuses a second holder in the same process with the real environment', async () => {
    const first = await acquireLock(statePath, 'orgform apply');
    expect(first.info.pid).toBe(process.pid);
    expect((await rejection(acquireLock(statePath, 'orgform apply'))).code).toBe('STATE_LOCKED');
    await first.release();
  });

  it('removes the lock on release, so that the next apply can take it', async () => {
    const first = await acquireLock(statePath, 'orgform apply', lockEnv());
    await first.release();
    await expect(fs.access(lockPath)).rejects.toThrow();
    const second = await acquireLock(statePath, 'orgform apply', lockEnv());
    expect(second.info.id).not.toBe(first.info.id);
  });

  it('removes on release the directories it made for the lock, when they are still empty', async () => {
    const deep = path.join(dir, 'repo', '.orgform', 'state.json');
    const lock = await acquireLock(deep, 'orgform apply', lockEnv());
    await lock.release();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('leaves a directory that was there before, or that holds the journal by release', async () => {
    const there = await acquireLock(statePath, 'orgform apply', lockEnv());
    await there.release();
    expect(await fs.readdir(dir)).toEqual([]);
    const journaled = path.join(dir, '.orgform', 'state.json');
    const lock = await acquireLock(journaled, 'orgform apply', lockEnv());
    await fs.writeFile(journaled, '{}');
    await lock.release();
    expect(await fs.readdir(path.join(dir, '.orgform'))).toEqual(['state.json']);
  });

  it('takes the lock even when an apply that just ended removes the empty directory meanwhile', async () => {
    const inside = path.join(dir, '.orgform', 'state.json');
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    vi.mocked(fs.open).mockImplementationOnce(async (...args: Parameters<typeof actual.open>) => {
      await actual.rmdir(path.join(dir, '.orgform'));
      return actual.open(...args);
    });
    const lock = await acquireLock(inside, 'orgform apply', lockEnv());
    expect(JSON.parse(await fs.readFile(lockPathFor(inside), 'utf8')).id).toBe(lock.info.id);
    await lock.release();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('never removes a lock that is not its own on release', async () => {
    const first = await acquireLock(statePath, 'orgform apply', lockEnv());
    await forceUnlock(statePath, first.info.id);
    const second = await acquireLock(statePath, 'orgform apply', lockEnv({ pid: 5555 }));
    await first.release();
    expect((await holderNow()).id).toBe(second.info.id);
  });

  it('takes over a lock left by a process of this host that no longer runs, and says so', async () => {
    const stale = await acquireLock(statePath, 'orgform apply', lockEnv({ pid: 1111 }));
    const asked: number[] = [];
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv({ isAlive: (pid) => (asked.push(pid), false) }));
    expect(asked).toEqual([1111]);
    expect(lock.replaced).toEqual(stale.info);
    expect((await holderNow()).id).toBe(lock.info.id);
  });

  it('never takes over a lock from another host, even if that pid does not run here', async () => {
    const other = await acquireLock(statePath, 'orgform apply', lockEnv({ host: 'runner-2' }));
    const err = await rejection(acquireLock(statePath, 'orgform apply', lockEnv({ isAlive: () => false })));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain('pid 4242 on runner-2');
    expect((await holderNow()).id).toBe(other.info.id);
  });

  it('does not break a lock that another process took over while this one judged the old one stale', async () => {
    await acquireLock(statePath, 'orgform apply', lockEnv({ pid: 1111 }));
    const rival: LockInfo = { id: 'aaaaaaaaaaaa', pid: 2222, host: 'runner-1', startedAt: '2025-03-04T05:06:08.000Z', command: 'orgform apply' };
    let raced = false;
    const isAlive = (pid: number) => {
      if (pid === 1111 && !raced) {
        // Meanwhile, another orgform on this host removes the stale lock and takes it.
        raced = true;
        unlinkSync(lockPath);
        writeFileSync(lockPath, JSON.stringify(rival), { flag: 'wx' });
        return false;
      }
      return pid !== 1111;
    };
    const err = await rejection(acquireLock(statePath, 'orgform apply', lockEnv({ isAlive })));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(`lock ID ${rival.id}`);
    expect(await holderNow()).toEqual(rival);
    expect(await fs.readdir(dir)).toEqual(['orgform.state.json.lock']);
  });

  it('leaves no lock behind when writing the lock file fails', async () => {
    await failNextFileWrite();
    await expect(acquireLock(statePath, 'orgform apply', lockEnv())).rejects.toThrow('no space left on device');
    expect(await fs.readdir(dir)).toEqual([]);
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv());
    expect((await holderNow()).id).toBe(lock.info.id);
  });

  it('says what to do, and not that orgform has a bug, when the lock file cannot be created', async () => {
    await fs.writeFile(path.join(dir, 'not-a-directory'), 'x');
    const inside = path.join(dir, 'not-a-directory', 'state.json');
    const err = await rejection(acquireLock(inside, 'orgform apply', lockEnv()));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(lockPathFor(inside));
    expect(err.message).toMatch(/--state PATH/);
  });

  it('removes, once it holds the lock, the lock files a killed process left (its temp file, a lock moved aside), and not a running one\'s', async () => {
    const gone = await deadPid();
    const orphans = [`orgform.state.json.lock.${gone}.0123456789ab.tmp`, `orgform.state.json.lock.${gone}.0123456789ab.removing`];
    const kept = [`orgform.state.json.lock.${process.ppid}.0123456789ab.tmp`, `.orgform.state.json.${gone}.1.tmp`];
    for (const name of [...orphans, ...kept]) await fs.writeFile(path.join(dir, name), '{}');
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv({ isAlive: (pid) => pid !== gone }));
    expect((await fs.readdir(dir)).sort()).toEqual([...kept, 'orgform.state.json.lock'].sort());
    await lock.release();
  });

  it.each(['EROFS', 'EACCES'] as const)('says, when the lock cannot be removed on release (%s), that what was done stands, and how the lock left goes', async (code) => {
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv());
    failNextRename(code);
    const err = await rejection(lock.release());
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(`Cannot remove the state lock ${lockPath}: ${code}`);
    expect(err.message).toContain(`What was done stands, as said above, but the lock ${lock.info.id} stays`);
    expect(err.message).toContain(`orgform force-unlock ${lock.info.id} --state ${statePath}`);
    expect((await holderNow()).id).toBe(lock.info.id);
  });

  it('tells how to recover from a lock file it cannot read (left by a crash as it was created)', async () => {
    await fs.writeFile(lockPath, '');
    const err = await rejection(acquireLock(statePath, 'orgform apply', lockEnv()));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(lockPath);
    expect(err.message).not.toContain('force-unlock <ID>');
  });
});

describe('forceUnlock', () => {
  it('refuses a wrong ID, naming the holder, and leaves the lock in place', async () => {
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv());
    const err = await rejection(forceUnlock(statePath, 'ffffffffffff'));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(`has ID ${lock.info.id}, not ffffffffffff`);
    expect(err.message).toContain('pid 4242 on runner-1');
    expect(err.message).toContain('Nothing was changed.');
    expect((await holderNow()).id).toBe(lock.info.id);
  });

  it('removes the lock given its ID and returns who held it', async () => {
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv());
    expect(await forceUnlock(statePath, lock.info.id)).toEqual(lock.info);
    await expect(fs.access(lockPath)).rejects.toThrow();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('says what to do, and not that orgform has a bug, when the lock file cannot be removed', async () => {
    const lock = await acquireLock(statePath, 'orgform apply', lockEnv());
    failNextRename('EROFS');
    const err = await rejection(forceUnlock(statePath, lock.info.id));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(`Cannot remove the state lock ${lockPath}: EROFS`);
    expect(err.message).toContain('is mounted read-only');
    expect((await holderNow()).id).toBe(lock.info.id);
  });

  it('says there is no lock when there is none', async () => {
    const err = await rejection(forceUnlock(statePath, 'ffffffffffff'));
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(`There is no lock on ${statePath}`);
  });
});
