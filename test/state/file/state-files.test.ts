/**
 * What a file state path may be: a regular file of one name (or none yet), or a link to one, which
 * is followed. Anything else is refused before any lock is taken or anything read.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, lstat, mkdir, readFile, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalKey } from '../../../src/model/journal-key.js';
import { openState } from '../../../src/state/open-state.js';
import { NO_INTEREST } from '../../../src/state/journal-index.js';
import { lockRequest } from '../../../src/state/open-state.js';
import { StateFiles } from '../../../src/state/file/state-files.js';
import { fileState, lockFileState, readJournalFile } from '../../support/file-state.js';
import { rejection } from '../../support/rejection.js';
import { makeWorkspace } from '../../support/workspace.js';

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string) => ({ kind: 'remove-channel' as const, organisation, outcome: 'applied' as const, at: '2026-01-01T00:00:00.000Z' });

/** The state at `path` as plan and apply open it, locked whole. */
async function lockThrough(path: string, cwd: string) {
  const state = await openState({ state: path, defaultPath: '/none', cwd });
  return state.lock(lockRequest('orgform apply', {}), NO_INTEREST);
}

describe('a file state path that is not a regular file', () => {
  it('a named pipe is refused at once, before any lock is taken, saying what it is (it used to hang apply with the lock held)', async () => {
    const cwd = await makeWorkspace();
    const fifo = join(cwd, 'state.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const err = await rejection(lockThrough(fifo, cwd));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toBe(`The state ${fifo} cannot be used: it is not a regular file (a named pipe). Nothing was locked, read or written; give --state the path of a file.`);
    // No lock, no gate, nothing else beside it; and a plan's read is refused the same way.
    expect((await readdir(cwd)).filter((name) => name.startsWith('state.json'))).toEqual(['state.json']);
    expect((await rejection(fileState(fifo).readIndex(NO_INTEREST))).message).toContain('a named pipe');
  });

  it.each([
    ['a directory', async (p: string): Promise<void> => void (await mkdir(p)), 'it is a directory'],
    ['a device', async (): Promise<void> => undefined, 'it is not a regular file (a device)'],
    ['a file with another hard link', async (p: string): Promise<void> => (await writeFile(`${p}.other`, ''), await link(`${p}.other`, p)), 'it has 2 hard links'],
    ['a link to nothing', async (p: string): Promise<void> => void (await symlink(`${p}.gone`, p)), 'it is a symbolic link to something that does not exist (ENOENT)'],
  ] as const)('%s is refused the same way, before any lock', async (_name, make, why) => {
    const cwd = await makeWorkspace();
    const path = why.includes('device') ? '/dev/null' : join(cwd, 'state.json');
    await make(path);
    const err = await rejection(fileState(path).lock(lockRequest('orgform apply', {}), NO_INTEREST));
    expect(err.message).toContain(`The state ${path} cannot be used: ${why}`);
    expect(err.message).toContain('Nothing was locked, read or written');
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('a file state path that is a link', () => {
  it('is written through to its target: the link stays a link, the target holds every entry, and the lock sits beside the target', async () => {
    const cwd = await makeWorkspace();
    await mkdir(join(cwd, 'real'));
    await mkdir(join(cwd, 'a'));
    const target = join(cwd, 'real', 'state.json');
    await writeFile(target, `${JSON.stringify({ version: 1, services: { [SERVICE]: { [journalKey('remove-channel', 'o1', 'c1')]: entry('one') } } })}\n`);
    await symlink('../real/state.json', join(cwd, 'a', 'state.json'));

    const held = await lockThrough(join(cwd, 'a', 'state.json'), cwd);
    expect(existsSync(join(cwd, 'real', 'state.json.lock'))).toBe(true);
    expect(existsSync(join(cwd, 'a', 'state.json.lock'))).toBe(false);
    await held.journal.record(SERVICE, journalKey('remove-channel', 'o2', 'c2'), entry('two'));
    await held.release();

    expect((await lstat(join(cwd, 'a', 'state.json'))).isSymbolicLink()).toBe(true);
    expect(Object.keys((await readJournalFile(target)).services[SERVICE] ?? {}).sort()).toEqual([journalKey('remove-channel', 'o1', 'c1'), journalKey('remove-channel', 'o2', 'c2')]);
    expect((await readFile(target, 'utf8')).startsWith('{"orgformJournal":2}\n')).toBe(true);
    expect((await readdir(join(cwd, 'real'))).sort()).toEqual(['state.json']);
  });

  it('shares one lock among every name that leads to one journal: through b while a holds it is refused, naming a', async () => {
    const cwd = await makeWorkspace();
    for (const dir of ['real', 'a', 'b']) await mkdir(join(cwd, dir));
    await writeFile(join(cwd, 'real', 'state.json'), '{"orgformJournal":2}\n');
    await symlink('../real/state.json', join(cwd, 'a', 'state.json'));
    await symlink(join(cwd, 'real', 'state.json'), join(cwd, 'b', 'state.json'));

    const first = await lockThrough(join(cwd, 'a', 'state.json'), cwd);
    try {
      const err = await rejection(lockThrough(join(cwd, 'b', 'state.json'), cwd));
      expect(err.code).toBe('STATE_LOCKED');
      expect(err.message).toContain(`is locked by pid ${process.pid} on `);
      expect(err.message).toContain(`(lock ID ${first.lock.id})`);
    } finally {
      await first.release();
    }
  });

  it('resolves a path whose directory is a link, and one not made yet, to the same place', async () => {
    const cwd = await makeWorkspace();
    await mkdir(join(cwd, 'real'));
    await symlink('real', join(cwd, 'via'));
    expect((await StateFiles.resolve(join(cwd, 'via', 'state.json'))).base).toBe((await StateFiles.resolve(join(cwd, 'real', 'state.json'))).base);
    expect((await StateFiles.resolve(join(cwd, 'via', 'new', 'state.json'))).base).toBe(join(await realpath(join(cwd, 'real')), 'new', 'state.json'));
    const held = await lockFileState(join(cwd, 'via', 'new', 'state.json'));
    await held.release();
    // The directory it made for the lock is gone again, nothing having been recorded.
    expect(existsSync(join(cwd, 'real', 'new'))).toBe(false);
  });
});
