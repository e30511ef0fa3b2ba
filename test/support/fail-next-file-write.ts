/**
 * Makes the next file opened through node:fs/promises fail its write with ENOSPC (a full disk).
 * The calling test file must mock node:fs/promises with pass-through spies (vi.mock), so that
 * `fs.open` here is the spy.
 */
import * as fs from 'node:fs/promises';
import { vi } from 'vitest';

export async function failNextFileWrite(): Promise<void> {
  const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
  vi.mocked(fs.open).mockImplementationOnce(async (file, flags, mode) => {
    const handle = await actual.open(file, flags, mode);
    return new Proxy(handle, {
      get(target, prop) {
        if (prop === 'writeFile' || prop === 'write') return async () => Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  });
}

/** Makes the next rename through node:fs/promises fail with `code` (EROFS: a file system gone read-only; EACCES: a directory made read-only). Needs a pass-through spy on `rename`, as above. */
export function failNextRename(code: 'EROFS' | 'EACCES' | 'ENOSPC'): void {
  vi.mocked(fs.rename).mockImplementationOnce(async () => Promise.reject(Object.assign(new Error(`${code}: injected, rename`), { code })));
}
