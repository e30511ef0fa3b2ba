import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { replaceFile, writeDurableFile, writeFileAtomically } from '../../src/state/write-file-atomically.js';
import { failNextFileWrite } from '../support/fail-next-file-write.js';
import { rejection } from '../support/rejection.js';

// Pass-through spies, so that a test can make one write fail or count the syncs.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open), rename: vi.fn(actual.rename) };
});

let dir: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'orgform-write-'));
  vi.mocked(fs.open).mockClear();
  vi.mocked(fs.rename).mockClear();
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('replaceFile', () => {
  it('replaces the file whole through a temp file beside it, creating the directory, mode 0600', async () => {
    const target = path.join(dir, 'deep', 'state.json');
    await replaceFile(target, 'one\n');
    await replaceFile(target, 'two\n');
    expect(await fs.readFile(target, 'utf8')).toBe('two\n');
    expect((await fs.stat(target)).mode & 0o777).toBe(0o600);
    expect(await fs.readdir(path.dirname(target))).toEqual(['state.json']);
    const renamed = vi.mocked(fs.rename).mock.calls.map(([from]) => path.basename(String(from)));
    expect(renamed).toHaveLength(2);
    expect(renamed.every((name) => /^\.state\.json\.\d+\.\d+\.tmp$/.test(name))).toBe(true);
  });

  it('fsyncs the file before the rename, then the directory', async () => {
    const target = path.join(dir, 'state.json');
    await replaceFile(target, 'x');
    const opened = vi.mocked(fs.open).mock.calls.map(([file]) => String(file));
    expect(opened).toHaveLength(2);
    expect(path.basename(opened[0]!)).toMatch(/^\.state\.json\..*\.tmp$/);
    expect(opened[1]).toBe(dir);
    // The temp file is opened (and synced) before the rename, the directory after it.
    const [fileOpen, dirOpen] = vi.mocked(fs.open).mock.invocationCallOrder;
    const [rename] = vi.mocked(fs.rename).mock.invocationCallOrder;
    expect(fileOpen).toBeLessThan(rename!);
    expect(rename).toBeLessThan(dirOpen!);
  });

  it('leaves the old file and no temp file behind when the write fails', async () => {
    const target = path.join(dir, 'state.json');
    await replaceFile(target, 'old');
    await failNextFileWrite();
    await expect(replaceFile(target, 'new')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await fs.readFile(target, 'utf8')).toBe('old');
    expect(await fs.readdir(dir)).toEqual(['state.json']);
  });
});

describe('writeDurableFile', () => {
  it('with exclusive, refuses a file that exists and leaves it as it was', async () => {
    const file = path.join(dir, 'lock.tmp');
    await fs.writeFile(file, 'theirs');
    await expect(writeDurableFile(file, 'mine', { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await fs.readFile(file, 'utf8')).toBe('theirs');
  });
});

describe('writeFileAtomically (files a user names)', () => {
  it('follows a symbolic link to the file it names, rather than replacing the link', async () => {
    const real = path.join(dir, 'real.yaml');
    const link = path.join(dir, 'link.yaml');
    await fs.writeFile(real, 'old');
    await fs.symlink(real, link);
    await writeFileAtomically(link, 'new');
    expect((await fs.lstat(link)).isSymbolicLink()).toBe(true);
    expect(await fs.readFile(real, 'utf8')).toBe('new');
  });

  it('refuses a directory, with what to do, and changes nothing', async () => {
    const err = await rejection(writeFileAtomically(dir, 'x', 'out'));
    expect(err.message).toBe('Cannot write out: it is not a regular file (a directory). Nothing was written; choose a file path with --out.');
  });

  it('says which file could not be written when its directory cannot be made', async () => {
    await fs.writeFile(path.join(dir, 'file'), '');
    const err = await rejection(writeFileAtomically(path.join(dir, 'file', 'plan.json'), 'x', 'file/plan.json'));
    expect(err.message).toMatch(/^Cannot write file\/plan\.json: .*Check that its directory can be created and written/);
  });
});
