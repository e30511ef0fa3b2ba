/** The TypeScript files of a source tree (declaration files left out), relative to it with forward slashes: what the code rules read. */
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';

export function sourceFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(prefix, entry.name);
    if (entry.isDirectory()) return sourceFiles(join(dir, entry.name), path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}
