/**
 * `orgform state migrate` between every kind of state: it locks each whole, reads each through a
 * backend of its own (never the one holding the lock), copies, checks and leaves the sources as
 * they were. From a Terraform HTTP backend too, which once always failed ("The client is
 * destroyed": its read closed the connection its lock then used).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatEntryLine } from '../../../src/state/journal-entry.js';
import { journalKey } from '../../../src/model/journal-key.js';
import { readJournalFile } from '../../support/file-state.js';
import { createTestDatabase } from '../../support/postgres.js';
import { runCli } from '../../support/run-cli.js';
import { startTerraformBackend, type TerraformBackend } from '../../support/terraform-http-backend.mjs';
import { makeWorkspace } from '../../support/workspace.js';

const SERVICE = 'https://orgs.example.test';
const CREDENTIALS = { ORGFORM_STATE_USERNAME: 'gitlab-ci-token', ORGFORM_STATE_PASSWORD: 'job-token-123' };
const servers: TerraformBackend[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function remote(kind: 'http' | 'postgres'): Promise<string> {
  if (kind === 'postgres') return `${await createTestDatabase('migrate')}?state=prod`;
  const server = await startTerraformBackend();
  servers.push(server);
  return `${server.url}/api/v4/projects/42/terraform/state/orgform`;
}

/** A journal file of `n` entries. */
async function journalFile(path: string, n: number): Promise<void> {
  const lines = Array.from({ length: n }, (_, i) => formatEntryLine({ service: SERVICE, key: journalKey('remove-channel', `org_${i}`, `chn_${i}`), entry: { kind: 'remove-channel', organisation: `o${i}`, outcome: 'applied', at: '2026-01-01T00:00:00.000Z' } }));
  await writeFile(path, `{"orgformJournal":2}\n${lines.sort().join('\n')}\n`);
}

describe('state migrate', () => {
  it.each(['http', 'postgres'] as const)('copies a file into %s and back out again, each copy checked', async (kind) => {
    const cwd = await makeWorkspace();
    await journalFile(join(cwd, 'source.json'), 5);
    const url = await remote(kind);
    const there = await runCli(['state', 'migrate', '--state', 'source.json', '--to', url], { cwd, env: CREDENTIALS });
    expect(there.stderr).toBe('');
    expect(there.stdout).toContain('Copied 5 entries from ');
    const back = await runCli(['state', 'migrate', '--state', url, '--to', 'back.json'], { cwd, env: CREDENTIALS });
    expect(back.stderr).toBe('');
    expect(back.stdout).toContain(`Read back and checked: ${join(cwd, 'back.json')} holds all 5 entries of `);
    expect(await readJournalFile(join(cwd, 'back.json'))).toEqual(await readJournalFile(join(cwd, 'source.json')));
  });

  it('refuses a source named twice, the target as a source, and --state with --from, writing nothing', async () => {
    const cwd = await makeWorkspace();
    await journalFile(join(cwd, 'a.json'), 2);
    const twice = await runCli(['state', 'migrate', '--from', 'a.json', '--from', 'a.json', '--to', 'b.json'], { cwd, env: {} });
    expect(twice.stderr).toContain(`${join(cwd, 'a.json')} is named twice`);
    const itself = await runCli(['state', 'migrate', '--from', 'a.json', '--to', 'a.json'], { cwd, env: {} });
    expect(itself.stderr).toContain('--to names a state being migrated');
    const both = await runCli(['state', 'migrate', '--state', 'a.json', '--from', 'a.json', '--to', 'b.json'], { cwd, env: {} });
    expect(both.stderr).toContain('with --from (repeated for several), or one with --state, not both');
    for (const result of [twice, itself, both]) expect(result.code).toBe(1);
    expect((await readJournalFile(join(cwd, 'b.json'))).services).toEqual({});
  });
});
