/**
 * The Terraform HTTP state's defects of issue 36, each as a user meets it, against a server that
 * plays GitLab's and Gitea's protocol (test/support/terraform-http-backend.mjs): a Terraform state
 * with nothing in it is never overwritten, and `state migrate` moves a journal off an HTTP state.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readNetworkSettings, readStateSettings } from '../../../src/cli/settings.js';
import { lockRequest, openState } from '../../../src/state/open-state.js';
import type { StateBackend } from '../../../src/state/state-backend.js';
import { createTestDatabase, query } from '../../support/postgres.js';
import { rejection } from '../../support/rejection.js';
import { runCli } from '../../support/run-cli.js';
import { startBackend } from '../../support/terraform-backends.js';
import type { TerraformBackend } from '../../support/terraform-http-backend.mjs';
import { makeWorkspace } from '../../support/workspace.js';

const PATH = '/api/v4/projects/42/terraform/state/orgform';
const CREDENTIALS = { ORGFORM_STATE_USERNAME: 'gitlab-ci-token', ORGFORM_STATE_PASSWORD: 'job-token-123' };
const SERVICE = 'https://orgs.example.test';
const entry = (n: number) => ({ kind: 'remove-channel' as const, organisation: `org-${n}`, outcome: 'applied' as const, at: '2025-01-02T03:04:05.000Z' });


function open(url: string): Promise<StateBackend> {
  return openState({ state: url, defaultPath: '/nonexistent/state.json', cwd: '/', settings: readStateSettings(CREDENTIALS), network: readNetworkSettings(CREDENTIALS) });
}

const request = lockRequest('orgform apply', { lockEnvironment: { pid: 4242, host: 'runner-1', now: () => 0, isAlive: () => true } });

/** An HTTP state holding `n` entries, written by orgform. */
async function stateWith(server: TerraformBackend, n: number): Promise<string> {
  const url = server.url + PATH;
  const state = await open(url);
  const held = await state.lock(request, { targets: new Set() });
  const recorded = Array.from({ length: n }, (_, i) => held.journal.record(SERVICE, `remove-channel org_${i} chn_${i}`, entry(i)));
  await held.release();
  await Promise.all(recorded);
  await state.close();
  return url;
}

describe('the Terraform HTTP state', () => {
  it('refuses an empty Terraform state (terraform_version 1.9.5, serial 12), naming it, and leaves it as it was', async () => {
    const server = await startBackend();
    const terraform = JSON.stringify({ version: 4, terraform_version: '1.9.5', serial: 12, lineage: '8e3f…', outputs: {}, resources: [] });
    server.store(PATH, terraform);
    const state = await open(server.url + PATH);
    for (const attempt of [() => state.lock(request, { targets: new Set() }), () => state.readIndex({ targets: new Set(['remove-channel chn_1']) })]) {
      const err = await rejection(attempt());
      expect(err.code).toBe('STATE_INVALID');
      expect(err.message).toContain('holds something other than orgform\'s journal (a Terraform state: terraform_version "1.9.5", serial 12, 0 resources, 0 outputs)');
    }
    await state.close();
    expect(server.versions(PATH)).toEqual([{ serial: 12, body: terraform }]);
    expect(server.lockOf(PATH)).toBeNull();
  });

  it('is moved to a file and to PostgreSQL with state migrate, and the copy checked', async () => {
    const server = await startBackend();
    const url = await stateWith(server, 3);
    const cwd = await makeWorkspace();
    const env = { ...CREDENTIALS };

    const toFile = await runCli(['state', 'migrate', '--state', url, '--to', 'copy.json'], { cwd, env });
    expect(toFile.stderr).toBe('');
    expect(toFile.stdout).toContain('Copied 3 entries from');
    expect(toFile.stdout).toContain('Read back and checked');
    expect(await readFile(join(cwd, 'copy.json'), 'utf8')).toContain('remove-channel org_2 chn_2');

    const database = `${await createTestDatabase('from_http')}?state=prod`;
    const toPostgres = await runCli(['state', 'migrate', '--from', url, '--to', database], { cwd, env });
    expect(toPostgres.stderr).toBe('');
    expect(toPostgres.code).toBe(0);
    expect(await query(database.replace(/\?.*/, ''), 'SELECT count(*)::int AS n FROM orgform.journal')).toEqual([{ n: 3 }]);
    // The source is left as it was, unlocked.
    expect(server.lockOf(PATH)).toBeNull();
  });
});

describe('the test backend’s enforceLocks switch', () => {
  it('stores a write whoever holds the lock when off, and refuses it when on (the default)', async () => {
    const lax = await startBackend({ flavour: 'gitea', enforceLocks: false });
    const strict = await startBackend({ flavour: 'gitea' });
    for (const server of [lax, strict]) server.takeLock(PATH, 'someone-else');
    const post = (server: TerraformBackend) =>
      fetch(`${server.url}${PATH}?ID=mine`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('gitlab-ci-token:job-token-123').toString('base64')}` }, body: JSON.stringify({ serial: 1 }) });
    expect((await post(lax)).status).toBe(200);
    expect((await post(strict)).status).toBe(409);
    expect(lax.versions(PATH)).toHaveLength(1);
    expect(strict.versions(PATH)).toHaveLength(0);
  });
});
