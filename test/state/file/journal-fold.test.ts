/**
 * The file state's lines and its folds: the base is a header line and sorted entry lines; frozen
 * logs are merged into it, each key once (the first recorded), and removed only after; damage is
 * refused, never dropped; what an older orgform left is read, and folded into the new form.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { journalKey, journalTarget, keyPart } from '../../../src/model/journal-key.js';
import { formatEntryLine, parseEntryLine, type LoggedEntry } from '../../../src/state/journal-entry.js';
import { isOfInterest } from '../../../src/state/journal-index.js';
import { foldJournal, isFoldDue, MAX_FROZEN_LOGS } from '../../../src/state/file/journal-fold.js';
import { InterestScan } from '../../../src/state/file/journal-lines.js';
import { StateFiles } from '../../../src/state/file/state-files.js';
import { fileState, lockFileState, readJournalFile } from '../../support/file-state.js';
import { rejection } from '../../support/rejection.js';
import { makeWorkspace } from '../../support/workspace.js';

const SERVICE = 'https://orgs.example.test';
const at = (day: number) => `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
const logged = (i: number, day = 1, service = SERVICE): LoggedEntry => ({
  service,
  key: journalKey('remove-channel', `org_${i}`, `chn_${i}`),
  entry: { at: at(day), kind: 'remove-channel', organisation: `o${i}`, outcome: 'applied' },
});
const lines = (...entries: LoggedEntry[]) => entries.map((e) => `${formatEntryLine(e)}\n`).join('');
const RUN_A = 'aaaaaaaaaaaa';
const RUN_B = 'bbbbbbbbbbbb';

let dir: string;
let statePath: string;
let files: StateFiles;
beforeEach(async () => {
  dir = await makeWorkspace();
  statePath = join(dir, 'state.json');
  files = await StateFiles.resolve(statePath);
});

describe('a fold', () => {
  it('merges frozen logs into a sorted base, each key once (the base’s entry, else the earliest), then removes them', async () => {
    await writeFile(statePath, `{"orgformJournal":2}\n${lines(logged(2, 1), logged(4, 1))}`);
    await writeFile(files.logFor(RUN_A), lines(logged(4, 9), logged(3, 5), logged(1, 7)));
    await writeFile(files.logFor(RUN_B), lines(logged(3, 2), logged(1, 8, 'https://a.example.test')));
    await foldJournal(files, [files.logFor(RUN_A), files.logFor(RUN_B)]);
    expect(await readFile(statePath, 'utf8')).toBe(`{"orgformJournal":2}\n${lines(logged(1, 8, 'https://a.example.test'), logged(1, 7), logged(2, 1), logged(3, 2), logged(4, 1))}`);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('leaves out a last line a killed run cut short (never acknowledged), and folds the rest', async () => {
    await writeFile(files.logFor(RUN_A), `${lines(logged(1))}${formatEntryLine(logged(2)).slice(0, 40)}`);
    expect(Object.keys((await readJournalFile(statePath)).services[SERVICE] ?? {})).toEqual([logged(1).key]);
    await foldJournal(files, [files.logFor(RUN_A)]);
    expect(await readFile(statePath, 'utf8')).toBe(`{"orgformJournal":2}\n${lines(logged(1))}`);
  });

  it.each([
    ['a damaged line in a log, before a good one', 'log', `not json\n${lines(logged(3))}`, `has a damaged line 1 in its log`],
    ['a damaged line in the base', 'base', `{"orgformJournal":2}\n${lines(logged(1))}{"service":1}\n`, 'has a damaged line 3.'],
    ['a base out of order', 'base', `{"orgformJournal":2}\n${lines(logged(2), logged(1))}`, 'has a damaged line 3.'],
    ['a base cut short', 'base', `{"orgformJournal":2}\n${lines(logged(1)).slice(0, -1)}`, 'has a damaged line 2.'],
  ] as const)('refuses %s, naming it, and leaves every file as it was; so does every reader', async (_name, where, text, problem) => {
    if (where === 'log') {
      await writeFile(statePath, `{"orgformJournal":2}\n${lines(logged(1))}`);
      await writeFile(files.logFor(RUN_A), text);
    } else {
      await writeFile(statePath, text);
      await writeFile(files.logFor(RUN_A), lines(logged(5)));
    }
    const before = [await readFile(statePath), await readFile(files.logFor(RUN_A))];
    const err = await rejection(foldJournal(files, [files.logFor(RUN_A)]));
    expect(err.message).toContain(`The state journal ${statePath} ${problem}`);
    expect(err.message).toContain('orgform will not overwrite it');
    expect([await readFile(statePath), await readFile(files.logFor(RUN_A))]).toEqual(before);
    expect((await rejection(readJournalFile(statePath))).message).toContain(problem);
    // A plan's read refuses damage too (it need not know the order).
    if (!_name.includes('order')) expect((await rejection(fileState(statePath).readIndex({ targets: new Set([journalTarget('remove-channel', 'chn_1')]) }))).message).toContain(problem);
  });
});

describe('what an older orgform left', () => {
  it('is read by every reader (its document and its log), and folded into the new form by the next run that ends', async () => {
    const v1 = { version: 1, services: { [SERVICE]: { [logged(1).key]: logged(1).entry, [logged(2).key]: logged(2).entry } } };
    await writeFile(statePath, `${JSON.stringify(v1, null, 2)}\n`);
    await writeFile(files.legacyLog, lines(logged(3)));
    const interest = { targets: new Set([journalTarget('remove-channel', 'chn_2'), journalTarget('remove-channel', 'chn_3')]) };
    const index = await fileState(statePath).readIndex(interest);
    expect([1, 2, 3].map((i) => index.has(SERVICE, logged(i).key))).toEqual([false, true, true]);
    expect(await isFoldDue(files, [files.legacyLog])).toBe(true);

    await (await lockFileState(statePath)).release();
    expect(await readFile(statePath, 'utf8')).toBe(`{"orgformJournal":2}\n${lines(logged(1), logged(2), logged(3))}`);
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});

describe('when a fold is due', () => {
  it('always for a small state; for a large one once its frozen logs reach a quarter of the base, or are many', async () => {
    await writeFile(files.logFor(RUN_A), lines(logged(1)));
    expect(await isFoldDue(files, [files.logFor(RUN_A)])).toBe(true);
    const big = Array.from({ length: 50_000 }, (_, i) => formatEntryLine(logged(i))).sort().join('\n');
    await writeFile(statePath, `{"orgformJournal":2}\n${big}\n`);
    expect(await isFoldDue(files, [files.logFor(RUN_A)])).toBe(false);
    const logs = Array.from({ length: MAX_FROZEN_LOGS + 1 }, (_, i) => files.logFor(String(i).padStart(12, '0')));
    for (const log of logs) await writeFile(log, lines(logged(1)));
    expect(await isFoldDue(files, logs)).toBe(true);
    await writeFile(files.logFor(RUN_B), big.slice(0, big.length / 3));
    expect(await isFoldDue(files, [files.logFor(RUN_B)])).toBe(true);
  });
});

describe('the interest scan', () => {
  const id = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '%', '"', '\\', 'é', '\u2028', '😀', '\n', '_'), minLength: 1, maxLength: 6 });
  it('keeps exactly the lines a full parse would keep, whatever the ids and services hold', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('remove-channel', 'revoke-invitation') as fc.Arbitrary<'remove-channel'>, id, id, fc.constantFrom(SERVICE, 'https://x"y\\z', 'https://é/"'))), fc.array(id), (rows, wanted) => {
        const interest = { targets: new Set(wanted.flatMap((w) => [journalTarget('remove-channel', w), journalTarget('revoke-invitation', w)])) };
        const scan = new InterestScan(interest);
        for (const [kind, org, target, service] of rows) {
          const line = Buffer.from(formatEntryLine({ service, key: journalKey(kind, org, target), entry: { at: at(1), kind, organisation: 'o', outcome: 'applied' } }));
          const kept = scan.visit(line, 0, line.length);
          const expected = isOfInterest(interest, journalKey(kind, org, target));
          expect(kept === undefined ? false : kept === null ? 'damaged' : true).toBe(expected);
          if (kept) expect(kept).toEqual(parseEntryLine(line.toString()));
        }
      }),
    );
    expect(keyPart('a b%')).toBe('a%20b%25');
  });
});
