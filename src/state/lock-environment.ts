/**
 * The file state's view of this process, for its lock: who it is, what time it says, and whether
 * a process of this host still runs (a holder whose process is gone is dropped, and said so).
 * Tests inject it.
 */
import { hostname } from 'node:os';
import { isProcessAlive } from './orphan-files.js';

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
