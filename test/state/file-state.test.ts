import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openFileState } from '../../src/state/file-state.js';
import { journalLogPath } from '../../src/state/journal.js';
import { failNextFileWrite } from '../support/fail-next-file-write.js';
import { rejection } from '../support/rejection.js';

// Pass-through spies, so that a test can make one write or read fail.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open), readFile: vi.fn(actual.readFile) };
});

const SERVICE = 'https://orgs.example.test';
const ENV = { pid: 4242, host: 'runner-1', now: () => Date.parse('2025-03-04T05:06:07.000Z'), isAlive: () => true };
const entry = { kind: 'remove-channel', organisation: 'acme', outcome: 'applied', at: '2025-01-01T00:00:00.000Z' };

let dir: string;
let statePath: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'orgform-file-state-'));
  statePath = path.join(dir, 'state.json');
});

afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the file state', () => {
  it('refuses the lock with the state error, the path and what to do, when the log a killed apply left cannot be folded (a full disk)', async () => {
    await fs.writeFile(statePath, '{"version": 1, "services": {}}\n');
    await fs.writeFile(journalLogPath(statePath), `${JSON.stringify({ service: SERVICE, key: 'remove-channel org_a chn_a', entry })}\n`);
    // The lock's own file is written first (open #1); the fold's temp file is the next (open #2).
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    vi.mocked(fs.open).mockImplementationOnce(actual.open as typeof fs.open);
    await failNextFileWrite();
    const err = await rejection(openFileState(statePath, ENV).lock('orgform apply'));
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(`Cannot write the state journal ${statePath}: no space left on device. The file system of ${dir} is full`);
    // The lock is let go; the journal and its log are as they were.
    expect((await fs.readdir(dir)).sort()).toEqual(['state.json', 'state.json.log']);
    const held = await openFileState(statePath, ENV).lock('orgform apply');
    expect(held.data.services[SERVICE]).toEqual({ 'remove-channel org_a chn_a': entry });
    await held.release();
  });

  it('says, for a journal this user may not read, to give it access, not that the journal is damaged', async () => {
    await fs.writeFile(statePath, '{"version": 1, "services": {}}\n');
    vi.mocked(fs.readFile).mockImplementationOnce(async () => Promise.reject(Object.assign(new Error(`EACCES: permission denied, open '${statePath}'`), { code: 'EACCES' })));
    const err = await rejection(openFileState(statePath, ENV).read());
    expect(err.code).toBe('STATE_INVALID');
    expect(err.message).toContain(`Cannot read the state journal ${statePath}: EACCES`);
    expect(err.message).toContain(`give it access to ${dir}`);
    expect(err.message).not.toContain('restore it from git');
  });
});
