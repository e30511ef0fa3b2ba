import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MAX_FILE_BYTES } from '../../config/parse-source.js';

/**
 * SHA-256 of each file as it is now, or null when it cannot be read: what a saved plan's files are
 * compared with. The paths come from the plan file, which anyone may have edited: only a regular
 * file no larger than a config file may be is read. A FIFO would block the read for ever, out of
 * reach of any signal (even process.exit waits for it), and /dev/zero never ends; opened
 * non-blocking, neither is read, and either counts as changed.
 */
export async function hashFiles(paths: readonly string[], cwd: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const path of paths) {
    try {
      const handle = await open(resolve(cwd, path), constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const info = await handle.stat();
        if (!info.isFile() || info.size > MAX_FILE_BYTES) {
          out.set(path, null);
          continue;
        }
        out.set(path, createHash('sha256').update(await handle.readFile()).digest('hex'));
      } finally {
        await handle.close();
      }
    } catch {
      out.set(path, null);
    }
  }
  return out;
}
