/**
 * Reading a file state while it is folded: a reader always sees every entry written before it
 * began, whichever moment of the fold it meets. Each interleaving is made, not hoped for: a
 * pass-through spy on node:fs/promises holds the reader (or the fold) at one step until the other
 * has done what the test wants, however loaded the machine.
 */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { journalKey, journalTarget } from '../../../src/model/journal-key.js';
import { foldJournal } from '../../../src/state/file/journal-fold.js';
import { StateFiles } from '../../../src/state/file/state-files.js';
import { fileState, lockFileState } from '../../support/file-state.js';
import { makeWorkspace } from '../../support/workspace.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open), rename: vi.fn(actual.rename) };
});

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string) => ({ kind: 'revoke-invitation' as const, organisation, outcome: 'applied' as const, at: '2026-01-01T00:00:00.000Z' });
const key = (i: number) => journalKey('revoke-invitation', `org_${i}`, `inv_${i}`);
/** Every entry the tests write is of interest. */
const interest = { targets: new Set(Array.from({ length: 20 }, (_, i) => journalTarget('revoke-invitation', `inv_${i}`))) };

let statePath: string;
beforeEach(async () => {
  statePath = join(await makeWorkspace(), 'state.json');
  const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
  vi.mocked(fs.open).mockImplementation(actual.open);
  vi.mocked(fs.rename).mockImplementation(actual.rename);
});

/** A base of entries 0–4 (folded), and a log of 5–9 from a run still holding the state (the fold is called on it directly). */
async function baseAndLog(): Promise<{ logs: string[]; finish(): Promise<void> }> {
  const first = await lockFileState(statePath);
  for (let i = 0; i < 5; i += 1) await first.journal.record(SERVICE, key(i), entry(`o${i}`));
  await first.release();
  const second = await lockFileState(statePath);
  for (let i = 5; i < 10; i += 1) await second.journal.record(SERVICE, key(i), entry(`o${i}`));
  const logs = await (await StateFiles.resolve(statePath)).listLogs();
  expect(logs).toHaveLength(1);
  return { logs, finish: () => second.release() };
}

/** A promise and its resolver: where a held step waits. */
function latch(): { reached: Promise<void>; reach(): void; go: Promise<void>; release(): void } {
  let reach!: () => void;
  let release!: () => void;
  return { reached: new Promise((r) => (reach = r)), reach: () => reach(), go: new Promise((r) => (release = r)), release: () => release() };
}

/** Holds the next open of a path `matching` says, before it is opened, until released. */
function holdOpen(matching: (path: string) => boolean) {
  const at = latch();
  const actual = vi.mocked(fs.open).getMockImplementation()!;
  vi.mocked(fs.open).mockImplementation(async (...args: Parameters<typeof fs.open>) => {
    if (!matching(String(args[0]))) return actual(...args);
    vi.mocked(fs.open).mockImplementation(actual);
    at.reach();
    await at.go;
    return actual(...args);
  });
  return at;
}

const keysOf = async (path: string) => {
  const seen: string[] = [];
  for await (const logged of fileState(path).entries()) seen.push(logged.key);
  return seen.sort();
};
const allKeys = Array.from({ length: 10 }, (_, i) => key(i)).sort();

describe('a reader of a file state during a fold', () => {
  it('that opened the logs before the fold, and the base after it: sees every entry (the removed log through its descriptor)', async () => {
    const { logs: frozen, finish } = await baseAndLog();
    const files = await StateFiles.resolve(statePath);
    const held = holdOpen((path) => path === files.base);
    const reading = fileState(statePath).readIndex(interest);
    await held.reached;
    await foldJournal(files, frozen);
    expect(await files.listLogs()).toEqual([]);
    held.release();
    const index = await reading;
    for (let i = 0; i < 10; i += 1) expect(index.has(SERVICE, key(i)), key(i)).toBe(true);
    await finish();
  });

  it('that listed a log the fold removed before it could open it: finds its entries in the new base', async () => {
    const { logs: frozen, finish } = await baseAndLog();
    const files = await StateFiles.resolve(statePath);
    const held = holdOpen((path) => path === frozen[0]);
    const reading = keysOf(statePath);
    await held.reached;
    await foldJournal(files, frozen);
    held.release();
    expect(await reading).toEqual(allKeys);
    await finish();
  });

  it('that read while the fold waited to put its new base in place: sees every entry, from the old base and the log', async () => {
    const { logs: frozen, finish } = await baseAndLog();
    const files = await StateFiles.resolve(statePath);
    const at = latch();
    const actual = vi.mocked(fs.rename).getMockImplementation()!;
    vi.mocked(fs.rename).mockImplementationOnce(async (from, to) => {
      at.reach();
      await at.go;
      return actual(from, to);
    });
    const folding = foldJournal(files, frozen);
    await at.reached;
    expect(await keysOf(statePath)).toEqual(allKeys);
    at.release();
    await folding;
    expect(await keysOf(statePath)).toEqual(allKeys);
    expect(await files.listLogs()).toEqual([]);
    await finish();
  });
});
