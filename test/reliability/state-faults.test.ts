/**
 * The file state on a full disk, a file system gone read-only and a directory this user may no
 * longer write, each real (a tmpfs of its own, chmod; see test/support/small-filesystem.ts), at
 * each step of an apply: taking the lock (with the fold of a log a killed apply left), recording
 * a change, letting the lock go. Each is the state error, naming the path and what to do; never
 * "a bug in orgform", never a raw errno; and a run once the disk is fixed converges.
 */
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPathFor, readJournalFile } from '../support/file-state.js';
import { cannotMount, listed, mountSmallFilesystem } from '../support/small-filesystem.js';
import { CHANGING_CONFIG } from '../support/workspace.js';
import { expectNoCrash, readLock, startWorld, startWorldHeldAtWrites, type World } from './support.js';

const NOBODY = { uid: 65534, gid: 65534 };
const OTHER_SERVICE = 'https://elsewhere.example';

/** A journal with one entry folded in and one in its log, as a killed apply leaves it (another service's, so the plan is the same). */
async function writeJournalWithLog(statePath: string): Promise<void> {
  const entry = (organisation: string) => ({ kind: 'remove-channel', organisation, outcome: 'applied', at: '2025-01-01T00:00:00.000Z' });
  await writeFile(statePath, `${JSON.stringify({ version: 1, services: { [OTHER_SERVICE]: { 'remove-channel org_a chn_a': entry('org_a') } } }, null, 2)}\n`);
  await writeFile(`${statePath}.log`, `${JSON.stringify({ service: OTHER_SERVICE, key: 'remove-channel org_b chn_b', entry: entry('org_b') })}\n`);
}

function expectStateError(text: string, statePath: string): void {
  expectNoCrash(text);
  expect(text).not.toContain('This is a bug in orgform');
  expect(text).toContain(statePath);
}

/** The world again, once the disk is fixed: apply converges, and the plan after it is empty. */
async function expectConvergesAfter(world: World, statePath: string, spawn: (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>): Promise<void> {
  const again = await spawn(['apply', '--auto-approve', '--state', statePath]);
  expect(again.stderr).toBe('');
  expect(again.code).toBe(0);
  const plan = await world.cli(['plan', '--detailed-exitcode', '--state', statePath]);
  expect(plan.stdout).toContain('No changes.');
  expect(plan.code).toBe(0);
}

describe.skipIf(cannotMount !== undefined)(`the file state on a full disk${cannotMount === undefined ? '' : ` (skipped: ${cannotMount})`}`, () => {
  it('refuses at the lock, sending nothing, when not even the lock fits: the state error, the files as they were; then folds what an older orgform left', async () => {
    const disk = mountSmallFilesystem(64);
    const statePath = join(disk.dir, 'state.json');
    await writeJournalWithLog(statePath);
    const before = [await readFile(statePath), await readFile(`${statePath}.log`)];
    await disk.fill(0);
    const world = await startWorld({ config: CHANGING_CONFIG });

    const result = await world.cli(['apply', '--auto-approve', '--state', statePath]);
    expect(result.code).toBe(1);
    expectStateError(result.stderr, statePath);
    expect(result.stderr).toContain(`Error: Cannot create the state lock ${lockPathFor(statePath)}: ENOSPC`);
    expect(result.stderr).toContain(`The file system of ${disk.dir} is full: free space on it, or keep the state elsewhere (--state PATH or ORGFORM_STATE`);
    expect(world.emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
    // Nothing lost, no lock and no temp file left.
    expect(await listed(disk.dir)).toEqual(['state.json', 'state.json.log']);
    expect([await readFile(statePath), await readFile(`${statePath}.log`)]).toEqual(before);

    await disk.unfill();
    await expectConvergesAfter(world, statePath, (args) => world.cli(args));
    // The older orgform's document and log were folded into a version 2 base, the other service's entries kept.
    const journal = await readJournalFile(statePath);
    expect(Object.keys(journal.services[OTHER_SERVICE] ?? {}).sort()).toEqual(['remove-channel org_a chn_a', 'remove-channel org_b chn_b']);
    expect((await readFile(statePath, 'utf8')).split('\n')[0]).toBe('{"orgformJournal":2}');
    expect(await listed(disk.dir)).toEqual(['state.json']);
  });

  it('stops starting changes when a completed one cannot be recorded, says which and why, lets the lock go, and converges once there is space', async () => {
    const disk = mountSmallFilesystem(64);
    const statePath = join(disk.dir, 'state.json');
    // Two pages left: the lock table takes one, the gate ticket the other, and the log has none.
    await disk.fill(2);
    const world = await startWorld({ config: CHANGING_CONFIG });

    const result = await world.cli(['apply', '--auto-approve', '--parallelism', '1', '--state', statePath]);
    expect(result.code).toBe(1);
    expectStateError(result.stdout + result.stderr, statePath);
    expect(result.stdout).toContain(`failed: revoke-invitation: done on the service, but not recorded in the state journal: Cannot write the state journal ${statePath}: ENOSPC`);
    expect(result.stdout).toContain(`The file system of ${disk.dir} is full: free space on it`);
    expect(result.stdout).toContain('not started: the state journal could not be written, so nothing more was started (ENOSPC: no space left on device, write)');
    expect(existsSync(lockPathFor(statePath))).toBe(false);
    expect((await listed(disk.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    await disk.unfill();
    await expectConvergesAfter(world, statePath, (args) => world.cli(args));
  });
});

interface Blocker {
  dir: string;
  /** Who the apply runs as (root ignores a directory's mode). */
  as?: { uid: number; gid: number };
  block(): unknown;
  unblock(): unknown;
}

/**
 * An apply held at its first write, lock in hand, while `prepare`'s block makes the state
 * unwritable: the change done is said unrecorded, the lock left is said with how to break it,
 * and the next apply (its process gone) takes the lock over and converges.
 */
async function applyBlockedPartWay(errno: string, advice: string, prepare: (world: World) => Promise<Blocker>): Promise<void> {
  const { world, writeHeld, release } = await startWorldHeldAtWrites({ config: CHANGING_CONFIG });
  const place = await prepare(world);
  const statePath = join(place.dir, 'state.json');
  const spawn = (args: string[]) => world.spawn(args, place.as === undefined ? {} : { as: place.as });

  const run = spawn(['apply', '--auto-approve', '--parallelism', '1', '--state', statePath]);
  let lockId: string;
  try {
    expect(await writeHeld()).toBe(true);
    lockId = (await readLock(lockPathFor(statePath))).id;
    await place.block();
  } finally {
    release();
  }
  const result = await run;
  await place.unblock();

  expect(result.code).toBe(1);
  expectStateError(result.stdout + result.stderr, statePath);
  expect(result.stdout).toContain(`done on the service, but not recorded in the state journal: Cannot write the state journal ${statePath}: ${errno}`);
  expect(result.stdout).toContain(advice);
  expect(result.stderr).toContain(`Error: Cannot remove the state lock ${lockPathFor(statePath)}: ${errno}`);
  expect(result.stderr).toContain(`What was done stands, as said above, but the lock ${lockId} stays: an apply on this host takes it over once this process has ended`);
  expect(result.stderr).toContain(`orgform force-unlock ${lockId} --state ${statePath}`);
  expect(existsSync(lockPathFor(statePath))).toBe(true);

  const again = await spawn(['apply', '--auto-approve', '--state', statePath]);
  expect(again.stderr).toContain(`Took over a stale lock on ${statePath}`);
  expect(again.code).toBe(0);
  expect((await world.cli(['plan', '--detailed-exitcode', '--state', statePath])).code).toBe(0);
}

describe('the file state when it can no longer be written part way through an apply', () => {
  it.skipIf(cannotMount !== undefined)(`a file system remounted read-only (EROFS)${cannotMount === undefined ? '' : ` (skipped: ${cannotMount})`}`, async () => {
    await applyBlockedPartWay('EROFS', 'is mounted read-only: remount it writable, or keep the state elsewhere', async () => {
      const disk = mountSmallFilesystem(256);
      return { dir: disk.dir, block: () => disk.readOnly(), unblock: () => disk.writable() };
    });
  });

  it('a directory this user may no longer write (chmod 0555: EACCES)', async () => {
    await applyBlockedPartWay('EACCES', 'This user may not read or write there: give it access to', async (world) => {
      const as = process.getuid?.() === 0 ? NOBODY : undefined;
      const dir = join(world.cwd, 'state');
      await mkdir(dir);
      if (as !== undefined) {
        await chmod(world.cwd, 0o755);
        await chmod(join(world.cwd, 'orgs.yaml'), 0o644);
        await chown(dir, as.uid, as.gid);
      }
      return { dir, ...(as === undefined ? {} : { as }), block: () => chmod(dir, 0o555), unblock: () => chmod(dir, 0o755) };
    });
  });
});
