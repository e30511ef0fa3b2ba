/**
 * The gate of a file state's lock table (R.lock.gate): a short mutex, held only while the table
 * is read and written again, milliseconds. It is taken by linking a complete file into place (the
 * atomic test-and-set: a gate is never seen empty or half written) that names its holder; one left
 * by a process of this host that no longer runs is taken over. Waited for at most GATE_WAIT_MS.
 * File system errors are thrown as they are: the caller says what it was doing.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { OrgformError } from '../../errors.js';
import type { LockEnvironment } from '../lock-environment.js';
import { literalPattern, removeOrphanFiles } from '../orphan-files.js';
import { NOTHING_CHANGED } from '../state-errors.js';
import { writeDurableFile } from '../write-file-atomically.js';
import { deleteIfNoneRuns } from './lock-table.js';
import type { StateFiles } from './state-files.js';

/** How long a gate held by a live process is waited for: the table is changed in milliseconds, so this is a stuck holder. */
export const GATE_WAIT_MS = 5_000;

interface GateHolder {
  id: string;
  pid: number;
  host: string;
}

/**
 * A process's ticket to the gate: a file beside it naming the process (`R.lock.gate.PID.ID.tmp`),
 * written once, and linked into the gate's place each time the gate is taken. A run keeps its
 * ticket from taking the lock to letting it go, so that it can let go on a full disk: a link
 * needs no new space. A killed process's ticket is removed with the lock's other orphans.
 */
export class GateTicket {
  private constructor(
    private readonly files: StateFiles,
    private readonly local: LockEnvironment,
    private readonly holder: GateHolder,
    private readonly path: string,
  ) {}

  static async create(files: StateFiles, local: LockEnvironment): Promise<GateTicket> {
    const holder: GateHolder = { id: randomBytes(6).toString('hex'), pid: local.pid, host: local.host };
    const ticket = new GateTicket(files, local, holder, `${files.gate}.${local.pid}.${holder.id}.tmp`);
    await ticket.write();
    return ticket;
  }

  private write(): Promise<void> {
    return writeDurableFile(this.path, `${JSON.stringify(this.holder)}\n`, { exclusive: true });
  }

  /** Takes the gate: at once, or once its holder lets go (or is found gone); refused after GATE_WAIT_MS. */
  async enter(): Promise<void> {
    const deadline = this.local.now() + GATE_WAIT_MS;
    for (let attempt = 0; ; attempt += 1) {
      const linked = await linkUnlessThere(this.path, this.files.gate);
      if (linked === true) return;
      if (linked === 'no ticket') {
        // Removed as an orphan (by a host that shares the directory, where a process of that PID is gone): written again.
        await this.write();
        continue;
      }
      const holder = await readHolder(this.files.gate);
      if (holder !== undefined && holder.host === this.local.host && !this.local.isAlive(holder.pid)) {
        await removeIfHeldBy(this.files.gate, holder.id, this.local.pid);
        continue;
      }
      if (this.local.now() >= deadline) throw gateStuckError(this.files, holder);
      await sleep(Math.min(50, 2 ** attempt));
    }
  }

  async leave(): Promise<void> {
    await removeIfHeldBy(this.files.gate, this.holder.id, this.local.pid);
  }

  /** Removes the ticket itself: the gate cannot be taken with it again. */
  async discard(): Promise<void> {
    await unlink(this.path).catch(() => undefined);
  }
}

async function linkUnlessThere(ticket: string, path: string): Promise<boolean | 'no ticket'> {
  try {
    await link(ticket, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'ENOENT') return 'no ticket';
    throw err;
  }
}

async function readHolder(path: string): Promise<GateHolder | undefined> {
  try {
    const holder = JSON.parse(await readFile(path, 'utf8')) as GateHolder;
    return typeof holder?.id === 'string' && typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined;
  }
}

function gateStuckError(files: StateFiles, holder: GateHolder | undefined): OrgformError {
  const who = holder === undefined ? 'an unreadable gate' : `pid ${holder.pid} on ${holder.host}`;
  return new OrgformError(
    'STATE_LOCKED',
    `The lock table of the state ${files.given} has been held by ${who} for over ${GATE_WAIT_MS / 1000} s (${files.gate}), a change that takes milliseconds. ${NOTHING_CHANGED} ${deleteIfNoneRuns(files.gate)}`,
  );
}

/**
 * Removes the file at `path` only if it still names `id`: it is first moved aside atomically (to
 * `PATH.PID.HEX.removing`, PID the remover's), so that one another process put there meanwhile is
 * never removed by mistake (it is put back). Returns false when it named another.
 */
export async function removeIfHeldBy(path: string, id: string, pid: number): Promise<boolean> {
  const aside = `${path}.${pid}.${randomBytes(6).toString('hex')}.removing`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  let named: unknown;
  try {
    named = (JSON.parse(await readFile(aside, 'utf8')) as { id?: unknown }).id;
  } catch {
    named = undefined;
  }
  if (named === id) {
    await unlink(aside).catch(() => undefined);
    return true;
  }
  // Not the one meant: put it back (link fails, rather than overwrite, if another was made meanwhile).
  await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
  return false;
}

/** The lock's own files a killed process left (`PATH.PID.HEX.tmp`, `PATH.PID.HEX.removing`, of the table and the gate), once it is gone. */
export function removeOrphanLockFiles(files: StateFiles, isAlive: (pid: number) => boolean): Promise<number> {
  const names = [basename(files.lockTable), basename(files.gate)].map(literalPattern).join('|');
  const form = new RegExp(`^(?:${names})\\.(\\d+)\\.[0-9a-f]+\\.(?:tmp|removing)$`);
  return removeOrphanFiles(dirname(files.lockTable), (name) => {
    const pid = form.exec(name)?.[1];
    return pid === undefined ? undefined : Number(pid);
  }, isAlive);
}
