/**
 * The state lock: one apply at a time per journal. The lock file sits beside the journal and
 * names its holder, so that a refusal can say who holds it. A lock whose holder was a process on
 * this host that no longer runs is stale and is taken over (the caller is told).
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, rmdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import { OrgformError } from '../errors.js';
import { fileStateError } from './file-state-error.js';
import { isProcessAlive, literalPattern, removeOrphanFiles } from './orphan-files.js';
import { writeDurableFile } from './write-file-atomically.js';

export interface LockInfo {
  id: string;
  pid: number;
  host: string;
  startedAt: string;
  command: string;
}

export interface HeldLock {
  info: LockInfo;
  /** A stale lock that was taken over, if any. */
  replaced?: LockInfo;
  release(): Promise<void>;
}

export interface LockEnvironment {
  pid: number;
  host: string;
  now: () => number;
  /** Whether a process of this host is still running. */
  isAlive: (pid: number) => boolean;
}

export function defaultLockEnvironment(): LockEnvironment {
  return { pid: process.pid, host: hostname(), now: Date.now, isAlive: isProcessAlive };
}

export function lockPathFor(statePath: string): string {
  return `${statePath}.lock`;
}

async function readHolder(lockPath: string): Promise<LockInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(lockPath, 'utf8')) as LockInfo;
    return typeof info?.id === 'string' ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes the lock file only if it still holds the lock `id`: it is first moved aside atomically
 * (to `LOCK.PID.HEX.removing`, PID the remover's), so that a lock another process took meanwhile is
 * never removed by mistake (it is put back). Returns false when the lock file held another lock;
 * throws the state error when the lock file cannot be moved.
 */
async function removeLockIfHeldBy(lockPath: string, id: string, pid: number): Promise<boolean> {
  const aside = `${lockPath}.${pid}.${randomBytes(6).toString('hex')}.removing`;
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw fileStateError('Cannot remove the state lock', lockPath, err);
  }
  if ((await readHolder(aside))?.id === id) {
    await unlink(aside).catch(() => undefined);
    return true;
  }
  // Not the lock we meant: put it back (link fails, rather than overwrite, if a lock was made meanwhile).
  await link(aside, lockPath).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
  return false;
}

/** A file system failure while taking the lock: what failed, and what to do, rather than a raw errno. */
function lockIoError(lockPath: string, err: unknown): OrgformError {
  return fileStateError('Cannot create the state lock', lockPath, err, 'Nothing was changed.');
}

/**
 * The lock's own files that a killed process left: its temp file (`LOCK.PID.HEX.tmp`, killed while
 * taking the lock) and a lock moved aside to be removed (`LOCK.PID.HEX.removing`, killed while
 * letting go), each removed once its process is gone.
 */
function removeOrphanLockFiles(lockPath: string, isAlive: (pid: number) => boolean): Promise<number> {
  const form = new RegExp(`^${literalPattern(basename(lockPath))}\\.(\\d+)\\.[0-9a-f]+\\.(tmp|removing)$`);
  return removeOrphanFiles(
    dirname(lockPath),
    (name) => {
      const pid = form.exec(name)?.[1];
      return pid === undefined ? undefined : Number(pid);
    },
    isAlive,
  );
}

function describeHolder(h: LockInfo): string {
  return `pid ${h.pid} on ${h.host}, running "${h.command}" since ${h.startedAt} (lock ID ${h.id})`;
}

export async function acquireLock(statePath: string, command: string, local: LockEnvironment = defaultLockEnvironment()): Promise<HeldLock> {
  const lockPath = lockPathFor(statePath);
  // The first directory this made (undefined when the directory was there): removed again on
  // release if still empty, so that an apply that journaled nothing (refused, nothing to do, run
  // from another directory) leaves no empty `.orgform/` behind.
  const makeDirectory = () =>
    mkdir(dirname(lockPath), { recursive: true }).catch((err: unknown) => {
      throw lockIoError(lockPath, err);
    });
  let created = await makeDirectory();
  const info: LockInfo = {
    id: randomBytes(6).toString('hex'),
    pid: local.pid,
    host: local.host,
    startedAt: new Date(local.now()).toISOString(),
    command,
  };
  let replaced: LockInfo | undefined;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    // The lock is written whole to a temp file, then linked into place: link fails if the lock
    // exists (the atomic test-and-set), and a lock file is never seen empty or half written,
    // even if this process is killed half-way.
    const temp = `${lockPath}.${local.pid}.${info.id}.tmp`;
    const text = JSON.stringify(info, null, 2) + '\n';
    try {
      try {
        await writeDurableFile(temp, text, { exclusive: true });
      } catch (err) {
        // An apply that has just ended may have removed the empty directory it had made: once more.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        const remade = await makeDirectory();
        created ??= remade;
        await writeDurableFile(temp, text, { exclusive: true });
      }
    } catch (err) {
      throw lockIoError(lockPath, err);
    }
    let taken = false;
    try {
      await link(temp, lockPath);
      taken = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        await unlink(temp).catch(() => undefined);
        throw lockIoError(lockPath, err);
      }
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    if (taken) {
      await removeOrphanLockFiles(lockPath, local.isAlive);
      return {
        info,
        replaced,
        async release() {
          const holder = await readHolder(lockPath);
          if (holder?.id === info.id) {
            await removeLockIfHeldBy(lockPath, info.id, local.pid).catch((err: unknown) => {
              throw lockLeftError(statePath, info.id, err);
            });
          }
          if (created !== undefined) await removeEmptyDirectories(dirname(lockPath), created);
        },
      };
    }
    const holder = await readHolder(lockPath);
    if (holder && holder.host === local.host && !local.isAlive(holder.pid) && attempt === 0) {
      // Only the stale lock is removed; one another process took over meanwhile stays.
      if (await removeLockIfHeldBy(lockPath, holder.id, local.pid)) replaced = holder;
      continue;
    }
    if (!holder) {
      // force-unlock cannot match an ID it cannot read, so say how to recover by hand.
      throw new OrgformError(
        'STATE_LOCKED',
        `The state ${statePath} is locked by an unreadable lock file ${lockPath} (an apply may be starting, or one stopped while taking the lock). If no orgform apply is running, delete ${lockPath} and run again.`,
      );
    }
    throw new OrgformError(
      'STATE_LOCKED',
      `The state ${statePath} is locked by ${describeHolder(holder)}. Wait for that apply to finish; if it is gone for good, run: orgform force-unlock ${holder.id} --state ${statePath}`,
    );
  }
  throw new OrgformError('STATE_LOCKED', `Could not lock ${statePath}.`);
}

/** The lock could not be let go at the end: what was done stands; how the lock left behind goes. */
function lockLeftError(statePath: string, id: string, err: unknown): OrgformError {
  const cause = err instanceof OrgformError ? err.message : fileStateError('Cannot remove the state lock', lockPathFor(statePath), err).message;
  return new OrgformError(
    'STATE_INVALID',
    `${cause} What was done stands, as said above, but the lock ${id} stays: an apply on this host takes it over once this process has ended; from another machine (a restored cache), break it with: orgform force-unlock ${id} --state ${statePath}`,
    { cause: err },
  );
}

/**
 * Removes `dir` and its parents up to `top`, each only if empty (rmdir refuses any other): what
 * holds the journal, or another process's lock, stays.
 */
async function removeEmptyDirectories(dir: string, top: string): Promise<void> {
  for (let at = dir; ; at = dirname(at)) {
    try {
      await rmdir(at);
    } catch {
      return;
    }
    if (at === top || dirname(at) === at) return;
  }
}

/** Breaks a lock explicitly, only if its ID is the one given (so that a new holder is never broken by mistake). */
export async function forceUnlock(statePath: string, id: string): Promise<LockInfo> {
  const lockPath = lockPathFor(statePath);
  const holder = await readHolder(lockPath);
  if (!holder) throw new OrgformError('STATE_LOCKED', `There is no lock on ${statePath} (no readable ${lockPath}).`);
  if (holder.id !== id) {
    throw new OrgformError('STATE_LOCKED', `The lock on ${statePath} has ID ${holder.id}, not ${id}; it is held by ${describeHolder(holder)}. Nothing was changed.`);
  }
  if (!(await removeLockIfHeldBy(lockPath, id, process.pid))) {
    throw new OrgformError('STATE_LOCKED', `The lock on ${statePath} changed hands while it was being broken; nothing was changed. Run orgform force-unlock again with the current ID.`);
  }
  return holder;
}
