import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

/** SHA-256 of each file as it is now, or null when it cannot be read: what a saved plan's files are compared with. */
export async function hashFiles(paths: readonly string[], cwd: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const path of paths) {
    try {
      out.set(path, createHash('sha256').update(await readFile(resolve(cwd, path))).digest('hex'));
    } catch {
      out.set(path, null);
    }
  }
  return out;
}
