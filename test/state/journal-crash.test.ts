/**
 * The file journal when its writer dies: a process recording entries (the built journal, dist/, as
 * the reliability suite's process faults use the built CLI) is killed with SIGKILL at moments spread
 * over its appends and its compactions; what it acknowledged is always read back, and the journal
 * always reads. Also the log's rules on their own: a last line cut short is left out, damage before
 * a good line is refused.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, journalLogPath, replayJournalLog, serializeJournal } from '../../src/state/journal.js';
import type { JournalData, JournalEntry } from '../../src/state/journal-entry.js';
import { rejection } from '../support/rejection.js';

const SERVICE = 'https://orgs.example.test';
const BUILT = path.resolve(__dirname, '../../dist/state/journal.js');
const entry = (organisation: string): JournalEntry => ({ kind: 'remove-channel', organisation, outcome: 'applied', at: '2025-01-01T00:00:00.000Z' });

let dir: string;
let statePath: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'orgform-journal-crash-'));
  statePath = path.join(dir, 'state.json');
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/**
 * Records entries e0, e1, ... in waves of `wave` at once, and prints the number acknowledged after
 * each wave; SIGKILLed `delayMs` after it has said `killAt` or more. Resolves with the count it last printed.
 */
function recordUntilKilled(killAt: number, wave: number, delayMs: number): Promise<number> {
  const script = `
    const { Journal } = await import(${JSON.stringify(BUILT)});
    const journal = await Journal.read(${JSON.stringify(statePath)});
    for (let n = 0; ; n += ${wave}) {
      await Promise.all(Array.from({ length: ${wave} }, (_, i) => journal.record(${JSON.stringify(SERVICE)}, 'e' + (n + i), { kind: 'remove-channel', organisation: 'org_' + (n + i), outcome: 'applied', at: '2025-01-01T00:00:00.000Z' })));
      process.stdout.write((n + ${wave}) + '\\n');
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Counted in entries acknowledged, not in time, so that a busy machine moves nothing.
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const lines = out.split('\n').filter((l) => /^\d+$/.test(l));
    if (lines.length > 0 && Number(lines[lines.length - 1]) >= killAt) timer ??= setTimeout(() => child.kill('SIGKILL'), delayMs);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`the recorder ended by itself (${signal ?? _code})`));
      const lines = out.split('\n').filter((l) => /^\d+$/.test(l));
      resolve(lines.length === 0 ? 0 : Number(lines[lines.length - 1]));
    });
  });
}

describe('the file journal killed while it writes', () => {
  it('keeps every entry it acknowledged and stays readable, whether killed while appending or while compacting', async () => {
    expect(existsSync(BUILT)).toBe(true);
    let sawLog = false;
    let sawCompacted = false;
    // Kills from the first appends to around and past the first compaction (at 5,000 entries).
    for (const [killAt, wave, delayMs] of [[1, 1, 0], [100, 7, 3], [4_600, 200, 0], [4_800, 400, 1], [4_800, 400, 8], [6_000, 400, 2]] as const) {
      await fs.rm(statePath, { force: true });
      await fs.rm(journalLogPath(statePath), { force: true });
      const acknowledged = await recordUntilKilled(killAt, wave, delayMs);
      expect(acknowledged).toBeGreaterThanOrEqual(killAt);
      const journal = await Journal.read(statePath);
      for (let i = 0; i < acknowledged; i += 1) expect(journal.has(SERVICE, `e${i}`)).toBe(true);
      sawLog ||= existsSync(journalLogPath(statePath));
      sawCompacted ||= existsSync(statePath);
      // The next holder folds it all into the file, which a reader of the document alone then sees.
      await journal.compact();
      expect(existsSync(journalLogPath(statePath))).toBe(false);
      const document = JSON.parse(await fs.readFile(statePath, 'utf8')) as JournalData;
      for (let i = 0; i < acknowledged; i += 1) expect(document.services[SERVICE]?.[`e${i}`]).toBeDefined();
    }
    expect(sawLog).toBe(true);
    expect(sawCompacted).toBe(true);
  }, 60_000);
});

describe('the journal log', () => {
  it('is replayed over the file: a reader sees the entries of both', async () => {
    await fs.writeFile(statePath, serializeJournal({ version: 1, services: { [SERVICE]: { old: entry('org_old') } } }));
    await fs.writeFile(journalLogPath(statePath), `${JSON.stringify({ service: SERVICE, key: 'new', entry: entry('org_new') })}\n`);
    expect(Object.keys((await Journal.read(statePath)).entries(SERVICE))).toEqual(['old', 'new']);
  });

  it('leaves out a last line cut short, which was never acknowledged', () => {
    const data: JournalData = { version: 1, services: {} };
    const good = JSON.stringify({ service: SERVICE, key: 'k1', entry: entry('org_1') });
    const cut = JSON.stringify({ service: SERVICE, key: 'k2', entry: entry('org_2') }).slice(0, 30);
    expect(replayJournalLog(data, `${good}\n${cut}`, statePath)).toBe(1);
    expect(Object.keys(data.services[SERVICE] ?? {})).toEqual(['k1']);
  });

  it('refuses a damaged line before a good one, naming the log and the line', async () => {
    const good = JSON.stringify({ service: SERVICE, key: 'k1', entry: entry('org_1') });
    await fs.writeFile(journalLogPath(statePath), `${good}\n{"service": 12}\n${good}\n`);
    const err = await rejection(Journal.read(statePath));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(`has a damaged line 2 in its log ${journalLogPath(statePath)}`);
  });
});

describe('the next writer after a kill that cut the log\'s only line short', () => {
  it('folds the torn log away before appending, so that what it acknowledges is never glued to the torn line and lost', async () => {
    const cut = JSON.stringify({ service: SERVICE, key: 'torn', entry: entry('org_torn') }).slice(0, 30);
    await fs.writeFile(journalLogPath(statePath), cut);
    // What the lock holder does: read, compact, then record.
    const journal = await Journal.read(statePath);
    await journal.compact();
    await journal.record(SERVICE, 'acknowledged', entry('org_ack'));
    const again = await Journal.read(statePath);
    expect(again.has(SERVICE, 'acknowledged')).toBe(true);
    expect(again.has(SERVICE, 'torn')).toBe(false);
  });
});
