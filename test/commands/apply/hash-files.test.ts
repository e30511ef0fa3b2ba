import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashFiles } from '../../../src/commands/apply/hash-files.js';
import { makeWorkspace } from '../../support/workspace.js';

describe('hashFiles', () => {
  it('gives each file’s SHA-256 as it is now, or null when it cannot be read', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'a.yaml'), 'abc');
    expect(await hashFiles(['a.yaml', 'gone.yaml'], cwd)).toEqual(
      new Map([
        ['a.yaml', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
        ['gone.yaml', null],
      ]),
    );
  });
});
