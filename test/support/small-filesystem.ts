/**
 * A small file system of its own (a tmpfs, mounted with mount(8): root only), for the failures the
 * fs hooks only imitate: a full disk (ENOSPC) and a file system gone read-only (EROFS). Each is
 * unmounted after its test (lazily, should a file still be open), and at the latest when the
 * process exits, so that no mount outlives the run. Where mounting is not allowed, `mountSmallFilesystem`
 * says why, and the test that needs it is skipped (the same failures are also tested through the
 * hooks, which need nothing).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { open, readdir, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEachTest } from './after-each-test.js';

const PAGE = 4096;

export interface SmallFilesystem {
  dir: string;
  /** Fills it with files of a page each until the disk is full, then frees `pages` of them. */
  fill(pages: number): Promise<void>;
  /** Removes what fill wrote. */
  unfill(): Promise<void>;
  readOnly(): void;
  writable(): void;
}

const mounted = new Set<string>();

function unmount(dir: string): void {
  if (!mounted.delete(dir)) return;
  if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
  try {
    rmdirSync(dir);
  } catch {
    // Left for the system's tmp cleaning: empty, and no longer a mount.
  }
}

afterEachTest(() => {
  for (const dir of [...mounted]) unmount(dir);
});
process.once('exit', () => {
  for (const dir of [...mounted]) unmount(dir);
});

/** Why a tmpfs cannot be mounted here, or undefined when it can (tried once, on a directory of its own). */
export const cannotMount: string | undefined = (() => {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (mount needs it)';
  const probe = mkdtempSync(join(tmpdir(), 'orgform-mount-probe-'));
  const tried = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', probe], { encoding: 'utf8' });
  if (tried.status === 0) spawnSync('umount', [probe]);
  rmdirSync(probe);
  return tried.status === 0 ? undefined : `mount failed: ${(tried.stderr || tried.error?.message || '').trim()}`;
})();

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${(result.stderr || result.error?.message || '').trim()}`);
}

/** A tmpfs of `kb` KiB (pages of 4 KiB), mode 0777 so that a test may use it as another user. */
export function mountSmallFilesystem(kb: number): SmallFilesystem {
  if (cannotMount !== undefined) throw new Error(`cannot mount a tmpfs: ${cannotMount}`);
  const dir = mkdtempSync(join(tmpdir(), 'orgform-small-fs-'));
  run('mount', ['-t', 'tmpfs', '-o', `size=${kb}k,mode=0777`, 'tmpfs', dir]);
  mounted.add(dir);
  const fillers: string[] = [];
  return {
    dir,
    async fill(pages) {
      for (let i = 0; ; i += 1) {
        const path = join(dir, `.filler-${i}`);
        const handle = await open(path, 'w');
        try {
          await handle.write(Buffer.alloc(PAGE));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          await handle.close();
          await unlink(path);
          break;
        }
        await handle.close();
        fillers.push(path);
      }
      if (fillers.length < pages) throw new Error(`the file system holds only ${fillers.length} free pages, not ${pages}`);
      for (const path of fillers.splice(fillers.length - pages)) await unlink(path);
    },
    async unfill() {
      for (const path of fillers.splice(0)) await unlink(path);
    },
    readOnly: () => run('mount', ['-o', 'remount,ro', dir]),
    writable: () => run('mount', ['-o', 'remount,rw', dir]),
  };
}

/** The names in `dir` a test should see, without fill's. */
export async function listed(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => !name.startsWith('.filler-')).sort();
}
