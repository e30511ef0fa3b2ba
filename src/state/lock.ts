/**
 * The state lock: one apply at a time per journal. The lock file sits beside the journal and
 * names its holder, so that a refusal can say who holds it. A lock whose holder was a process on
 * this host that no longer runs is stale and is taken over (the caller is told).
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, rmdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { OrgformError } from '../errors.js';
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
  return {
    pid: process.pid,
    host: hostname(),
    now: Date.now,
    isAlive(pid) {
      try {
        process.kill(pid, 0);
        return true;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'EPERM';
      }
    },
  };
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
 * Removes the lock file only if it still holds the lock `id`: it is first moved aside atomically,
 * so that a lock another process took meanwhile is never removed by mistake (it is put back).
 * Returns false when the lock file held another lock.
 */
async function removeLockIfHeldBy(lockPath: string, id: string): Promise<boolean> {
  const aside = `${lockPath}.${randomBytes(6).toString('hex')}.removing`;
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
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
  const detail = err instanceof Error ? err.message : String(err);
  return new OrgformError(
    'STATE_INVALID',
    `Cannot create the state lock ${lockPath}: ${detail}. Make sure its directory can be created and written, or keep the journal elsewhere with --state PATH, then run apply again.`,
    { cause: err },
  );
}

function describeHolder(h: LockInfo): string {
  return `pid ${h.pid} on ${h.host}, running "${h.command}" since ${h.startedAt} (lock ID ${h.id})`;
}

export async function acquireLock(statePath: string, command: string, env: LockEnvironment = defaultLockEnvironment()): Promise<HeldLock> {
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
    pid: env.pid,
    host: env.host,
    startedAt: new Date(env.now()).toISOString(),
    command,
  };
  let replaced: LockInfo | undefined;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    // The lock is written whole to a temp file, then linked into place: link fails if the lock
    // exists (the atomic test-and-set), and a lock file is never seen empty or half written,
    // even if this process is killed half-way.
    const temp = `${lockPath}.${env.pid}.${info.id}.tmp`;
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
      return {
        info,
        replaced,
        async release() {
          const holder = await readHolder(lockPath);
          if (holder?.id === info.id) await removeLockIfHeldBy(lockPath, info.id).catch(() => undefined);
          if (created !== undefined) await removeEmptyDirectories(dirname(lockPath), created);
        },
      };
    }
    const holder = await readHolder(lockPath);
    if (holder && holder.host === env.host && !env.isAlive(holder.pid) && attempt === 0) {
      // Only the stale lock is removed; one another process took over meanwhile stays.
      if (await removeLockIfHeldBy(lockPath, holder.id)) replaced = holder;
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
  if (!(await removeLockIfHeldBy(lockPath, id))) {
    throw new OrgformError('STATE_LOCKED', `The lock on ${statePath} changed hands while it was being broken; nothing was changed. Run orgform force-unlock again with the current ID.`);
  }
  return holder;
}
