import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHash } from 'node:crypto';
import { checkUnchanged, inspectTarget, removeOrphanTempFiles, replaceFile, tempPathFor, writeDurableFile, writeFileAtomically } from '../../src/state/write-file-atomically.js';
import { deadPid } from '../support/dead-pid.js';
import { failNextFileWrite } from '../support/fail-next-file-write.js';
import { rejection } from '../support/rejection.js';

// Pass-through spies, so that a test can make one write fail or count the syncs.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open), rename: vi.fn(actual.rename), access: vi.fn(actual.access) };
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

describe('replaceFile with the text in pieces', () => {
  /** Pieces of 3 MB in all, with characters of 2 to 4 bytes, so that writes of a megabyte end inside none of them. */
  function* pieces(): Generator<string> {
    for (let i = 0; i < 30_000; i += 1) yield `${i}: é€😀 ${'x'.repeat(90)}\n`;
  }

  it('writes every piece, in order, in writes of about a megabyte, and fsyncs before the rename', async () => {
    const target = path.join(dir, 'plan.json');
    await replaceFile(target, pieces());
    expect(await fs.readFile(target, 'utf8')).toBe([...pieces()].join(''));
    expect((await fs.stat(target)).mode & 0o777).toBe(0o600);
    expect(await fs.readdir(dir)).toEqual(['plan.json']);
  });

  it('leaves the old file and no temp file behind when a write fails, and reads no piece after it', async () => {
    const target = path.join(dir, 'plan.json');
    await replaceFile(target, 'old');
    let read = 0;
    function* counted(): Generator<string> {
      for (const piece of pieces()) {
        read += 1;
        yield piece;
      }
    }
    await failNextFileWrite();
    await expect(replaceFile(target, counted())).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await fs.readFile(target, 'utf8')).toBe('old');
    expect(await fs.readdir(dir)).toEqual(['plan.json']);
    // The first megabyte's pieces, and not the rest.
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(30_000);
  });
});

describe('removeOrphanTempFiles', () => {
  it('removes the temp files of a writer that is gone, and neither a running writer\'s nor another file\'s', async () => {
    const target = path.join(dir, 'state.json');
    await fs.writeFile(target, '{}\n');
    const gone = await deadPid();
    const running = process.ppid;
    const names = [`.state.json.${gone}.3.tmp`, `.state.json.${running}.1.tmp`, `.other.json.${gone}.1.tmp`, `.state.json.${gone}.tmp`, 'state.json.old'];
    for (const name of names) await fs.writeFile(path.join(dir, name), '{"half');
    expect(await removeOrphanTempFiles(target)).toBe(1);
    expect((await fs.readdir(dir)).sort()).toEqual(names.slice(1).concat('state.json').sort());
  });

  it('is what replaceFile does before it writes: a killed write of the same file is cleaned up by the next', async () => {
    const target = path.join(dir, 'plan.bin');
    const orphan = path.join(dir, `.plan.bin.${await deadPid()}.1.tmp`);
    await fs.writeFile(orphan, 'half a plan');
    await replaceFile(target, 'whole');
    expect(await fs.readdir(dir)).toEqual(['plan.bin']);
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

/** The working tree is the test's directory: links in it lead in it. */
const tree = () => ({ root: dir, real: dir });
const OUT = { shown: 'out', option: '--out', get tree() { return tree(); } };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('writeFileAtomically (files a user names)', () => {
  it('follows a symbolic link to the file it names, rather than replacing the link', async () => {
    const real = path.join(dir, 'real.yaml');
    const link = path.join(dir, 'link.yaml');
    await fs.writeFile(real, 'old');
    await fs.symlink(real, link);
    await writeFileAtomically(link, 'new', OUT);
    expect((await fs.lstat(link)).isSymbolicLink()).toBe(true);
    expect(await fs.readFile(real, 'utf8')).toBe('new');
  });

  it('keeps the mode of the file it replaces, through a link too; a new file is 0600', async () => {
    const shared = path.join(dir, 'orgs.yaml');
    await fs.writeFile(shared, 'old');
    await fs.chmod(shared, 0o644);
    await writeFileAtomically(shared, 'new', OUT);
    expect((await fs.stat(shared)).mode & 0o7777).toBe(0o644);
    const real = path.join(dir, 'real.yaml');
    await fs.writeFile(real, 'old');
    await fs.chmod(real, 0o640);
    await fs.symlink(real, path.join(dir, 'link.yaml'));
    await writeFileAtomically(path.join(dir, 'link.yaml'), 'new', OUT);
    expect((await fs.stat(real)).mode & 0o7777).toBe(0o640);
    await writeFileAtomically(path.join(dir, 'new.json'), 'x', OUT);
    expect((await fs.stat(path.join(dir, 'new.json'))).mode & 0o7777).toBe(0o600);
  });

  it('does not carry set-user-ID and like bits over to the new text', async () => {
    const file = path.join(dir, 'orgs.yaml');
    await fs.writeFile(file, 'old');
    await fs.chmod(file, 0o4755);
    await writeFileAtomically(file, 'new', OUT);
    expect((await fs.stat(file)).mode & 0o7777).toBe(0o755);
  });

  it('refuses a directory as a directory, naming the option that gave it, and changes nothing', async () => {
    const err = await rejection(writeFileAtomically(dir, 'x', { shown: 'reports', option: '--report', tree: tree() }));
    expect(err.message).toBe('Cannot write reports: it is a directory. Nothing was written; give --report the path of a file (in it, or elsewhere).');
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('refuses a file with another hard link, which a rename would leave with the old text', async () => {
    const file = path.join(dir, 'orgs.yaml');
    await fs.writeFile(file, 'old');
    await fs.link(file, path.join(dir, 'backup.yaml'));
    const err = await rejection(writeFileAtomically(file, 'new', { shown: 'orgs.yaml', option: '-f', tree: tree() }));
    expect(err.message).toMatch(/^Cannot write orgs\.yaml: it has 2 hard links, and replacing it would leave the other names with the old content\. Nothing was written; .* choose another path for -f\.$/);
    expect(await fs.readFile(path.join(dir, 'backup.yaml'), 'utf8')).toBe('old');
    expect(await fs.readFile(file, 'utf8')).toBe('old');
    expect((await fs.readdir(dir)).sort()).toEqual(['backup.yaml', 'orgs.yaml']);
  });

  it('refuses a file that cannot be written (read-only), rather than replacing it', async () => {
    const file = path.join(dir, 'orgs.yaml');
    await fs.writeFile(file, 'old');
    await fs.chmod(file, 0o444);
    // (As root every file can be written: the check is made to fail as it would for anyone else.)
    vi.mocked(fs.access).mockRejectedValueOnce(Object.assign(new Error('permission denied'), { code: 'EACCES' }));
    const err = await rejection(writeFileAtomically(file, 'new', { shown: 'orgs.yaml', option: '-f', tree: tree() }));
    expect(err.message).toBe('Cannot write orgs.yaml: it is read-only (mode 0444). Nothing was written; make it writable (chmod u+w orgs.yaml) or choose another path for -f.');
    expect(await fs.readFile(file, 'utf8')).toBe('old');
  });

  it('with madeFrom, writes nothing when the file no longer holds what the text was made from, and says so', async () => {
    const file = path.join(dir, 'orgs.yaml');
    await fs.writeFile(file, 'read\n');
    // Edited after it was read: the check right before the rename sees it.
    await fs.writeFile(file, 'edited meanwhile\n');
    const err = await rejection(writeFileAtomically(file, 'updated\n', { shown: 'orgs.yaml', option: '-f', tree: tree(), madeFrom: sha256('read\n') }));
    expect(err.message).toBe('orgs.yaml changed after orgform read it (an edit, a checkout?). Nothing was written, so that the change is kept; run the command again to start from what it holds now.');
    expect(await fs.readFile(file, 'utf8')).toBe('edited meanwhile\n');
    expect(await fs.readdir(dir)).toEqual(['orgs.yaml']);
    await writeFileAtomically(file, 'updated\n', { shown: 'orgs.yaml', option: '-f', tree: tree(), madeFrom: sha256('edited meanwhile\n') });
    expect(await fs.readFile(file, 'utf8')).toBe('updated\n');
  });

  it('with madeFrom, checks the file after the new text is on disk, right before the rename', async () => {
    const file = path.join(dir, 'orgs.yaml');
    await fs.writeFile(file, 'read\n');
    // An edit that lands while the temp file is written and synced.
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    vi.mocked(fs.open).mockImplementationOnce(async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      await actual.writeFile(file, 'edited while writing\n');
      return handle;
    });
    await expect(writeFileAtomically(file, 'updated\n', { shown: 'orgs.yaml', option: '-f', tree: tree(), madeFrom: sha256('read\n') })).rejects.toThrow(/orgs\.yaml changed after orgform read it/);
    expect(await fs.readFile(file, 'utf8')).toBe('edited while writing\n');
    expect(await fs.readdir(dir)).toEqual(['orgs.yaml']);
  });

  it('says which file could not be written when its directory cannot be made', async () => {
    await fs.writeFile(path.join(dir, 'file'), '');
    const err = await rejection(writeFileAtomically(path.join(dir, 'file', 'plan.json'), 'x', { shown: 'file/plan.json', option: '--out', tree: tree() }));
    expect(err.message).toMatch(/^Cannot write file\/plan\.json: .*Check that its directory can be created and written, or choose another path for --out\.$/);
  });
});

describe('inspectTarget and checkUnchanged', () => {
  it('refuse before anything is written what writeFileAtomically would refuse, and say what is there', async () => {
    await expect(inspectTarget(dir, OUT)).rejects.toThrow(/it is a directory/);
    expect((await inspectTarget(path.join(dir, 'none'), OUT)).existing).toBeUndefined();
    await fs.writeFile(path.join(dir, 'a'), 'x');
    expect((await inspectTarget(path.join(dir, 'a'), OUT)).existing?.size).toBe(1);
    await expect(checkUnchanged(path.join(dir, 'a'), { ...OUT, madeFrom: sha256('x') })).resolves.toBeUndefined();
    await expect(checkUnchanged(path.join(dir, 'a'), { ...OUT, madeFrom: sha256('y') })).rejects.toThrow(/^out changed after orgform read it/);
    await expect(checkUnchanged(path.join(dir, 'gone'), { ...OUT, madeFrom: sha256('x') })).rejects.toThrow(/^out was removed or cannot be read after orgform read it/);
  });
});

describe('replaceFile and the temp file beside the target', () => {
  it('never opens a name that is already there (a planted link): it takes the next one, and the link’s target is untouched', async () => {
    const target = path.join(dir, 'plan.bin');
    const outside = path.join(dir, 'outside.txt');
    await fs.writeFile(outside, 'keep me\n');
    // The next temp names this process would take, each a link to the outside file.
    const probe = tempPathFor(target);
    const [, name, pid, n] = /^(.*)\.(\d+)\.(\d+)\.tmp$/.exec(path.basename(probe))!;
    for (let i = 1; i <= 3; i += 1) await fs.symlink(outside, path.join(dir, `${name}.${pid}.${Number(n) + i}.tmp`));
    await replaceFile(target, 'the plan\n');
    expect(await fs.readFile(target, 'utf8')).toBe('the plan\n');
    expect(await fs.readFile(outside, 'utf8')).toBe('keep me\n');
  });
});
