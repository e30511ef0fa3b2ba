import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { failNextFileWrite } from '../support/fail-next-file-write.js';
import { rejection } from '../support/rejection.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMPACT_AFTER, Journal, journalLogPath, parseJournal, replayJournalLog } from '../../src/state/journal.js';
import type { JournalEntry } from '../../src/state/journal-entry.js';
import { journalKey } from '../../src/model/journal-key.js';

// Pass-through spies on the calls the journal makes, so that a test can count writes or make one fail.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, rename: vi.fn(actual.rename), open: vi.fn(actual.open) };
});

const SERVICE = 'https://orgs.example.test';
const entry = (organisation: string, at = '2025-01-01T00:00:00.000Z'): JournalEntry => ({ kind: 'revoke-invitation', organisation, outcome: 'applied', at });

let dir: string;
let statePath: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'orgform-journal-'));
  statePath = path.join(dir, 'orgform.state.json');
  vi.mocked(fs.rename).mockClear();
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});


describe('journalKey', () => {
  it('joins kind, organisation id and target id', () => {
    expect(journalKey('remove-channel', 'org_1', 'ch_9')).toBe('remove-channel org_1 ch_9');
  });
});

describe('Journal', () => {
  it('reads a missing file as an empty journal', async () => {
    const journal = await Journal.read(statePath);
    expect(journal.entries(SERVICE)).toEqual({});
    expect(journal.has(SERVICE, 'anything')).toBe(false);
    await expect(fs.access(statePath)).rejects.toThrow();
  });

  it('reads back what was recorded, per service', async () => {
    const journal = await Journal.read(statePath);
    const key = journalKey('revoke-invitation', 'org_1', 'inv_2');
    await journal.record(SERVICE, key, entry('org_1'));
    const again = await Journal.read(statePath);
    expect(again.get(SERVICE, key)).toEqual(entry('org_1'));
    expect(again.has(SERVICE, key)).toBe(true);
    expect(again.has('https://other.example.test', key)).toBe(false);
  });

  it('resolves every one of many concurrent records and writes them together, with sorted keys', async () => {
    const journal = await Journal.read(statePath);
    const keys = Array.from({ length: 50 }, (_, i) => journalKey('remove-channel', `org_${String(49 - i).padStart(2, '0')}`, `ch_${i}`));
    await Promise.all(keys.map((key, i) => journal.record(i % 2 === 0 ? SERVICE : 'https://a.example.test', key, entry(`org_${i}`))));

    expect(journal.written.appends).toBeGreaterThanOrEqual(1);
    expect(journal.written.appends).toBeLessThan(keys.length / 2);

    const again = await Journal.read(statePath);
    keys.forEach((key, i) => expect(again.get(i % 2 === 0 ? SERVICE : 'https://a.example.test', key)).toEqual(entry(`org_${i}`)));

    await journal.compact();

    const text = await fs.readFile(statePath, 'utf8');
    const data = JSON.parse(text) as { services: Record<string, Record<string, object>> };
    expect(Object.keys(data)).toEqual(['services', 'version']);
    expect(Object.keys(data.services)).toEqual(['https://a.example.test', SERVICE]);
    for (const entries of Object.values(data.services)) {
      expect(Object.keys(entries)).toEqual(Object.keys(entries).sort());
      for (const e of Object.values(entries)) expect(Object.keys(e)).toEqual(['at', 'kind', 'organisation', 'outcome']);
    }
    expect(text.endsWith('\n')).toBe(true);
  });

  it('writes an entry recorded while a write is under way in the next write, and flush waits for it', async () => {
    const journal = await Journal.read(statePath);
    const first = journal.record(SERVICE, 'k1', entry('org_1'));
    await Promise.resolve();
    const second = journal.record(SERVICE, 'k2', entry('org_2'));
    await journal.flush();
    await Promise.all([first, second]);
    const again = await Journal.read(statePath);
    expect(Object.keys(again.entries(SERVICE))).toEqual(['k1', 'k2']);
  });

  it('records again after an earlier write finished', async () => {
    const journal = await Journal.read(statePath);
    await journal.record(SERVICE, 'k1', entry('org_1'));
    await journal.record(SERVICE, 'k2', entry('org_2'));
    expect(Object.keys((await Journal.read(statePath)).entries(SERVICE))).toEqual(['k1', 'k2']);
  });

  it('leaves no temporary files behind, and once compacted only the journal file', async () => {
    const journal = await Journal.read(statePath);
    await Promise.all(Array.from({ length: 20 }, (_, i) => journal.record(SERVICE, `k${i}`, entry(`org_${i}`))));
    await journal.record(SERVICE, 'last', entry('org_last'));
    expect(await fs.readdir(dir)).toEqual(['orgform.state.json.log']);
    await journal.compact();
    expect(await fs.readdir(dir)).toEqual(['orgform.state.json']);
    expect(Object.keys(parseJournal(await fs.readFile(statePath, 'utf8'), statePath).services[SERVICE] ?? {})).toHaveLength(21);
  });

  it('appends each write to its log rather than rewriting the whole file, until it has held COMPACT_AFTER entries', async () => {
    const journal = await Journal.read(statePath);
    for (let i = 0; i < 3; i += 1) await journal.record(SERVICE, `k${i}`, entry(`org_${i}`));
    expect(journal.written).toEqual({ appends: 3, documents: 0 });
    expect(vi.mocked(fs.rename).mock.calls.filter(([, to]) => to === statePath)).toHaveLength(0);
    await Promise.all(Array.from({ length: COMPACT_AFTER }, (_, i) => journal.record(SERVICE, `many${i}`, entry(`org_${i}`))));
    expect(journal.written.documents).toBeGreaterThanOrEqual(1);
    expect(Object.keys((await Journal.read(statePath)).entries(SERVICE))).toHaveLength(COMPACT_AFTER + 3);
  });

  it('creates the directory of the journal when it is missing', async () => {
    const nested = path.join(dir, 'a', 'b', 'state.json');
    const journal = await Journal.read(nested);
    await journal.record(SERVICE, 'k1', entry('org_1'));
    expect((await Journal.read(nested)).has(SERVICE, 'k1')).toBe(true);
  });

  it('rejects a record whose write fails, leaving the journal file as it was and no temporary file', async () => {
    const journal = await Journal.read(statePath);
    await journal.record(SERVICE, 'k1', entry('org_1'));
    await journal.compact();
    const before = await fs.readFile(statePath);

    await failNextFileWrite();

    const err = await rejection(journal.record(SERVICE, 'k2', entry('org_2')));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(statePath);
    expect(err.message).toContain('no space left on device');
    expect(await fs.readFile(statePath)).toEqual(before);
    expect((await fs.readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // The entry stays recorded in memory and goes out with the next write.
    await journal.record(SERVICE, 'k3', entry('org_3'));
    expect(Object.keys((await Journal.read(statePath)).entries(SERVICE))).toEqual(['k1', 'k2', 'k3']);
    expect(Object.keys(parseJournal(await fs.readFile(statePath, 'utf8'), statePath).services[SERVICE] ?? {})).toEqual(['k1', 'k2', 'k3']);
  });

  describe('refuses a journal it cannot trust, naming its path and leaving it byte-for-byte unchanged', () => {
    const good = JSON.stringify({ version: 1, services: { [SERVICE]: { k1: entry('org_1') } } }, null, 2);
    it.each([
      ['corrupt JSON', '{"version": 1, "services": {,}}', 'is not valid JSON'],
      ['a truncated file', good.slice(0, good.length - 7), 'is not valid JSON'],
      ['a future version', '{"version": 2, "services": {}}', 'has version 2; this orgform reads version 1'],
      ['no version', '{"services": {}}', 'has no version'],
      ['an array', '[]', 'is not a JSON object'],
      ['a string', '"journal"', 'is not a JSON object'],
      ['null', 'null', 'is not a JSON object'],
      ['no services', '{"version": 1}', 'has no "services" object'],
      ['a malformed entry list', `{"version": 1, "services": {"${SERVICE}": []}}`, `has a malformed entry list for ${SERVICE}`],
      ['an entry that is not an object', `{"version": 1, "services": {"${SERVICE}": {"k1": null}}}`, `has a malformed entry k1 for ${SERVICE}`],
      ['an entry without its outcome', `{"version": 1, "services": {"${SERVICE}": {"k1": {"kind": "remove-channel", "organisation": "o", "at": "2025-01-02T03:04:05Z"}}}}`, `has a malformed entry k1 for ${SERVICE}`],
      ['an entry whose time is no time', `{"version": 1, "services": {"${SERVICE}": {"k1": {"kind": "remove-channel", "organisation": "o", "outcome": "applied", "at": "yesterday"}}}}`, `has a malformed entry k1 for ${SERVICE}`],
      ['an entry whose run is not text', `{"version": 1, "services": {"${SERVICE}": {"k1": {"kind": "remove-channel", "organisation": "o", "outcome": "applied", "at": "2025-01-02T03:04:05Z", "run": 7}}}}`, `has a malformed entry k1 for ${SERVICE}`],
    ])('%s', async (_what, text, problem) => {
      await fs.writeFile(statePath, text);
      const bytes = await fs.readFile(statePath);
      const err = await rejection(Journal.read(statePath));
      expect(err.code).toBe('STATE_INVALID');
      expect(err.message).toContain(`The state journal ${statePath} ${problem}`);
      expect(err.message).toContain('will not overwrite it');
      expect(await fs.readFile(statePath)).toEqual(bytes);
      expect(await fs.readdir(dir)).toEqual(['orgform.state.json']);
    });

    it('a journal that cannot be read at all (a directory)', async () => {
      await fs.mkdir(statePath);
      const err = await rejection(Journal.read(statePath));
      expect(err.code).toBe('STATE_INVALID');
      expect(err.message).toContain(`${statePath} cannot be read (EISDIR)`);
    });
  });

  it('parses a valid journal text', () => {
    const data = parseJournal(JSON.stringify({ version: 1, services: { [SERVICE]: { k1: entry('org_1') } } }), statePath);
    expect(data.services[SERVICE]?.k1).toEqual(entry('org_1'));
  });
});

describe('journalKey', () => {
  it('keeps ids with spaces apart', () => {
    expect(journalKey('revoke-invitation', 'a b', 'c')).not.toBe(journalKey('revoke-invitation', 'a', 'b c'));
  });

  it('stays readable for ordinary ids', () => {
    expect(journalKey('remove-channel', 'org:hooli/eu', 'ch_9')).toBe('remove-channel org:hooli/eu ch_9');
  });
});
