/**
 * A run's journal on a file state: an entry counts only once all its bytes are on disk. A short
 * write is continued; one that then fails is refused with every entry of its batch and every later
 * one, and the log is cut back to its last whole line. Pass-through spies on node:fs/promises make
 * a file handle's writes short or failing, where the test says.
 */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { journalKey } from '../../../src/model/journal-key.js';
import type { LockEnvironment } from '../../../src/state/lock-environment.js';
import { fileState, lockFileState, readJournalFile } from '../../support/file-state.js';
import { rejection } from '../../support/rejection.js';
import { makeWorkspace } from '../../support/workspace.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open) };
});

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string) => ({ kind: 'remove-channel' as const, organisation, outcome: 'applied' as const, at: '2026-01-01T00:00:00.000Z' });
const key = (i: number) => journalKey('remove-channel', `org_${i}`, `chn_${i}`);

/** A file handle's write, as the journal calls it: bytes, from an offset, a length, at a position. */
type Write = (buffer: Uint8Array, offset: number, length: number, position: number | null) => Promise<{ bytesWritten: number; buffer: Uint8Array }>;

/**
 * The next file opened whose name ends with `.log` gets `writes` in place of its first writes, in
 * order (each given the real write, to call or not); later writes are the real ones.
 */
function nextLogWrites(...writes: Array<(real: Write, buffer: Uint8Array, offset: number, length: number) => ReturnType<Write>>): void {
  const actual = vi.mocked(fs.open).getMockImplementation()!;
  vi.mocked(fs.open).mockImplementation(async (...args: Parameters<typeof fs.open>) => {
    const handle = await actual(...args);
    if (!String(args[0]).endsWith('.log') || typeof args[1] !== 'number') return handle;
    vi.mocked(fs.open).mockImplementation(actual);
    const real = handle.write.bind(handle) as unknown as Write;
    const queue = [...writes];
    const write: Write = (buffer, offset, length, position) => {
      const next = queue.shift();
      return next === undefined ? real(buffer, offset, length, position) : next(real, buffer, offset, length);
    };
    handle.write = write as unknown as fs.FileHandle['write'];
    return handle;
  });
}

/** Another run of this host, each its own pid, all alive. */
const env = (pid: number): LockEnvironment => ({ pid, host: 'runner-1', now: () => Date.now(), isAlive: () => true });

let statePath: string;
beforeEach(async () => {
  statePath = join(await makeWorkspace(), 'state.json');
});

describe('the journal of a run on a file state', () => {
  it('resolves every one of many records made at once, once they are on disk, in few appends', async () => {
    const held = await lockFileState(statePath);
    await Promise.all(Array.from({ length: 200 }, (_, i) => held.journal.record(SERVICE, key(i), entry(`o${i}`))));
    const log = (await fs.readdir(join(statePath, '..'))).find((name) => name.endsWith('.log'))!;
    const text = await fs.readFile(join(statePath, '..', log), 'utf8');
    expect(text.split('\n')).toHaveLength(201);
    expect(held.journal.has(SERVICE, key(199))).toBe(true);
    await held.release();
    expect(Object.keys((await readJournalFile(statePath)).services[SERVICE] ?? {})).toHaveLength(200);
  });

  it('continues a short write: the record resolves only once every byte is written, and reads back whole', async () => {
    const held = await lockFileState(statePath);
    const shortWrites: number[] = [];
    nextLogWrites(async (real, buffer, offset, length) => {
      shortWrites.push(length);
      return real(buffer, offset, Math.floor(length / 2), null);
    });
    await held.journal.record(SERVICE, key(1), entry('one'));
    expect(shortWrites).toHaveLength(1);
    await held.release();
    expect((await readJournalFile(statePath)).services[SERVICE]?.[key(1)]).toMatchObject({ organisation: 'one' });
  });

  it('refuses a record whose write stops part way (a full disk), and every record after it; the log ends at its last whole line', async () => {
    const first = await lockFileState(statePath);
    await first.journal.record(SERVICE, key(1), entry('one'));
    await first.release();

    const held = await lockFileState(statePath);
    nextLogWrites(
      (real, buffer, offset, length) => real(buffer, offset, Math.floor(length / 2), null),
      async () => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })),
    );
    const err = await rejection(held.journal.record(SERVICE, key(2), entry('two')));
    expect(err.message).toContain(`Cannot write the state journal ${statePath}: ENOSPC: no space left on device, write. The file system of`);
    const later = await rejection(held.journal.record(SERVICE, key(3), entry('three')));
    expect(later.message).toBe(err.message);
    // Half a line was written, then cut off again: nothing of the refused batch is there.
    const log = (await fs.readdir(join(statePath, '..'))).find((name) => name.endsWith('.log'))!;
    expect(await fs.readFile(join(statePath, '..', log), 'utf8')).toBe('');
    expect(held.journal.has(SERVICE, key(2))).toBe(false);
    await held.release();
    expect(Object.keys((await readJournalFile(statePath)).services[SERVICE] ?? {})).toEqual([key(1)]);
  });

  it('acknowledges nothing of an append under way while its run was force-unlocked and its log folded away by another run of the same shard', async () => {
    const broken = await lockFileState(statePath, { env: env(4242), partition: { index: 1, count: 2 } });
    let atWrite!: () => void;
    const reached = new Promise<void>((resolve) => (atWrite = resolve));
    let letGo!: () => void;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    // Its first append is held after the check that the lock is still its own, before its bytes go.
    nextLogWrites(async (real, buffer, offset, length) => {
      atWrite();
      await released;
      return real(buffer, offset, length, null);
    });
    const held = broken.journal.record(SERVICE, key(1), entry('one'));
    await reached;
    await fileState(statePath, env(5151)).forceUnlock(broken.lock.id);
    // The same shard again: it records, ends, and folds the broken run's log (its run is out of the table), removing it.
    const again = await lockFileState(statePath, { env: env(4343), partition: { index: 1, count: 2 } });
    await again.journal.record(SERVICE, key(2), entry('two'));
    await again.release();
    letGo();
    const err = await rejection(held);
    expect(err.code).toBe('STATE_LOCK_LOST');
    expect(err.message).toContain(`the lock ${broken.lock.id} was broken (orgform force-unlock)`);
    await broken.release();
    expect(Object.keys((await readJournalFile(statePath)).services[SERVICE] ?? {})).toEqual([key(2)]);
  });
});
