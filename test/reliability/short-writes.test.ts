/**
 * The file journal when the disk fills or a file size limit is reached part way through an apply:
 * a write then goes short (part of a batch on disk), and the next fails. Every change the apply
 * reports done must be in the journal read back, and no log may end in part of a line. Real
 * limits, with the built CLI: a 40 KiB tmpfs of its own (root only: skipped, saying why,
 * elsewhere) and `ulimit -f`. (Before the journal finished short writes, a batch cut short was
 * reported done: 37 reported, 36 held.)
 */
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { readJournalFile } from '../support/file-state.js';
import { CLI_BIN } from '../support/run-cli.js';
import { cannotMount, mountSmallFilesystem } from '../support/small-filesystem.js';
import { expectNoCrash, startWorld, type World } from './support.js';

const ORGANISATIONS = 400;

/** 400 organisations with a channel to remove each: about 80 KB of journal, more than either limit lets through. */
async function bulkWorld(): Promise<World> {
  const data = generateEmulatorData({ organisations: ORGANISATIONS });
  const lines = ['version: 1', 'organisations:'];
  for (const o of data.organisations) lines.push(`  ${o.slug}:`, '    notificationChannels:', `      remove: [chn_${o.id.slice(4)}]`);
  return startWorld({ config: `${lines.join('\n')}\n`, emulator: { data } });
}

/** The built CLI through `sh -c`, so that a limit (`ulimit -f N`) can be set first. */
function applyThroughShell(world: World, statePath: string, before: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = `${before} exec "$0" "$1" apply --auto-approve --parallelism 8 --format json --state "$2"`;
  const child = spawn('sh', ['-c', command, process.execPath, CLI_BIN, statePath], { cwd: world.cwd, env: { PATH: process.env.PATH, ...world.env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every change reported done (applied or found done) is in the journal; every log ends at a whole line. */
async function expectEveryReportedChangeJournaled(world: World, dir: string, statePath: string, result: { code: number | null; stdout: string; stderr: string }, errno: string): Promise<void> {
  expectNoCrash(result);
  expect(result.code).toBe(1);
  expect(result.stdout).toContain(`not recorded in the state journal: Cannot write the state journal ${statePath}: ${errno}`);
  // Reported done: each change whose end the run told as applied or already done (one JSON line each).
  const reported = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string; outcome?: string; address?: string })
    .filter((event) => event.type === 'change_end' && (event.outcome === 'applied' || event.outcome === 'already_done'))
    .map((event) => {
      const [, n, channel] = /^organisations\.org-(\d+)\.notificationChannels\.remove\.(chn_\d+)$/.exec(event.address!)!;
      return `remove-channel org_${n} ${channel}`;
    });
  expect(reported.length).toBeGreaterThan(20);
  expect(reported.length).toBeLessThan(ORGANISATIONS);
  const journaled = new Set(Object.keys((await readJournalFile(statePath)).services[world.env.ORGFORM_BASE_URL!] ?? {}));
  expect(reported.filter((key) => !journaled.has(key))).toEqual([]);
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.log'))) {
    const text = await readFile(join(dir, name), 'utf8');
    expect(text === '' || text.endsWith('\n'), `${name} ends in part of a line`).toBe(true);
  }
  // And once there is room again, the next run converges.
  const plan = await world.cli(['plan', '--state', statePath]);
  expect(plan.stdout).toContain(`${journaled.size} one-shot changes already done according to the journal, not planned again.`);
}

describe('the file journal when its writes go short part way through an apply', () => {
  it.skipIf(cannotMount !== undefined)(`on a full disk (a 40 KiB tmpfs)${cannotMount === undefined ? '' : ` (skipped: ${cannotMount})`}`, async () => {
    const disk = mountSmallFilesystem(40);
    const statePath = join(disk.dir, 'state.json');
    const world = await bulkWorld();
    const result = await applyThroughShell(world, statePath, '');
    await expectEveryReportedChangeJournaled(world, disk.dir, statePath, result, 'ENOSPC');
  });

  it('under a file size limit (ulimit -f: a short write, then EFBIG)', async () => {
    const world = await bulkWorld();
    const statePath = join(world.cwd, 'state.json');
    // 40 blocks of 512 bytes: the log reaches it about a quarter of the way through.
    const result = await applyThroughShell(world, statePath, 'ulimit -f 40 &&');
    await expectEveryReportedChangeJournaled(world, world.cwd, statePath, result, 'EFBIG');
  });
});
