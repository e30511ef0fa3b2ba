/**
 * The reviewed plan, end to end against the emulator: its digest is the same from any process and
 * any working directory for the same configuration and service; anything changed on the service
 * gives another one, and `apply --expect-digest` then applies nothing; and a change made by hand
 * between the review and the merge, or during the apply itself, is never applied or reverted.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { changeBillingByHand, setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli, spawnCli } from '../support/run-cli.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';
import { bodyOf } from '../support/saved-plan-lines.js';

const billingOf = (emulator: Emulator, id: string) => emulator.store.dump().organisations.find((o) => o.id === id)?.billing;

async function jsonDigest(cwd: string, env: Record<string, string>, args: string[] = []): Promise<string> {
  const run = await spawnCli(['plan', '--format', 'json', ...args], { cwd, env });
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { digest: string }).digest;
}

/**
 * A relay in front of the emulator that runs `before` on each request before passing it on, and
 * waits for it: a hand-made change placed exactly at a point of the run, whatever the machine's load.
 */
async function relay(target: string, before: (method: string, path: string) => Promise<void>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void before(req.method ?? 'GET', req.url ?? '/').then(() => {
        const out = request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        out.end(Buffer.concat(chunks));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('the plan digest against the emulator', () => {
  it('is the same for the same configuration and service, across two processes and two working directories', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const other = await makeWorkspace({});
    await mkdir(join(other, 'config', 'teams'), { recursive: true });
    await writeFile(join(other, 'config', 'teams', 'all.yaml'), CHANGING_CONFIG);
    const here = await jsonDigest(cwd, env);
    const there = await jsonDigest(other, env, ['-f', 'config/teams/all.yaml']);
    const below = await jsonDigest(join(other, 'config'), { ...env, ORGFORM_BASE_URL: `${env.ORGFORM_BASE_URL}/api/organisations/v1/` }, ['-f', 'teams']);
    expect(here).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(there).toBe(here);
    expect(below).toBe(here);
    // Every format says the same digest.
    const text = await runCli(['plan', '--no-color'], { cwd, env });
    const markdown = await runCli(['plan', '--format', 'markdown'], { cwd, env });
    expect(text.stdout).toContain(`Plan digest: ${here}\n`);
    expect(markdown.stdout.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^<!-- orgform-digest ${here} [A-Za-z0-9_-]+ -->$`));
    expect(markdown.stdout).toContain(`Plan digest \`${here.slice(0, 19)}\``);
    await runCli(['plan', '--out', 'plan.json'], { cwd, env });
    expect(bodyOf(await readFile(join(cwd, 'plan.json'), 'utf8')).digest).toBe(here);
  });

  it('changes with any change on the service, and apply --expect-digest then applies nothing', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const review = await runCli(['plan', '--format', 'markdown'], { cwd, env });
    await writeFile(join(cwd, 'review.md'), review.stdout);
    const reviewed = await jsonDigest(cwd, env);

    // By hand between the review and the merge: acme's e-mail (declared) to yet another value.
    await changeBillingByHand(emulator, 'org_acme', { billingEmail: 'hand@acme.example' });
    expect(await jsonDigest(cwd, env)).not.toBe(reviewed);
    emulator.resetCounters();
    const apply = await spawnCli(['apply', '--expect-digest', reviewed, '--reviewed', 'review.md'], { cwd, env });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain('The plan now is not the one reviewed');
    expect(apply.stderr).toContain('billingEmail, as read when planned: "billing@acme.example" when reviewed, "hand@acme.example" now');
    expect(billingOf(emulator, 'org_acme')?.billingEmail).toBe('hand@acme.example');
    expect(emulator.counters.writes).toBe(0);
    expect(emulator.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('applies the reviewed plan when nothing changed, and a re-run after it finds nothing to do and succeeds', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const reviewed = await jsonDigest(cwd, env);
    const apply = await spawnCli(['apply', '--expect-digest', reviewed], { cwd, env });
    expect(apply.code, apply.stderr).toBe(0);
    expect(billingOf(emulator, 'org_acme')?.billingEmail).toBe('finance@acme.example');
    const again = await spawnCli(['apply', '--expect-digest', reviewed], { cwd, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/No changes/);
  });

  it('never applies or reverts a change made by hand while the merge’s apply runs, after its plan was read', async () => {
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    let armed = false;
    let done = false;
    // Once armed: just before apply reads acme again to write its billing (ORGFORM_READ_MAX_AGE_MS=0: by id), someone changes it by hand.
    const middle = await relay(emulator.url, async (method, path) => {
      if (armed && !done && method === 'GET' && /\/organisations\/org_acme(\?|$)/.test(path)) {
        done = true;
        await changeBillingByHand(emulator, 'org_acme', { billingEmail: 'hand@acme.example', customerId: 'cus_hand' });
      }
    });
    try {
      const through = { ...env, ORGFORM_BASE_URL: middle.url, ORGFORM_READ_MAX_AGE_MS: '0' };
      const reviewed = await jsonDigest(cwd, through);
      armed = true;
      const apply = await spawnCli(['apply', '--expect-digest', reviewed, '--no-color'], { cwd, env: through });
      expect(done).toBe(true);
      expect(apply.code).toBe(1);
      expect(apply.stdout + apply.stderr).toMatch(/organisations\.acme\.billing[^\n]*stale/);
    } finally {
      await middle.close();
    }
    expect(billingOf(emulator, 'org_acme')).toMatchObject({ billingEmail: 'hand@acme.example', customerId: 'cus_hand' });
  });
  it('never reverts another active organisation chosen by hand while the merge’s apply runs: setting the active one is then stale', async () => {
    const config = 'version: 1\nactiveOrganisation: acme\norganisations:\n  acme: {}\n  umbrella: {}\n';
    const { cwd, env, emulator } = await setupEmulatorWorkspace({ 'orgs.yaml': config });
    let armed = false;
    let done = false;
    // Once armed, after apply's plan has read the listing: just before the next listing read (setting acme active reads it again) or, failing that, the write itself, someone makes umbrella active by hand.
    let listings = 0;
    const middle = await relay(emulator.url, async (method, path) => {
      if (!armed || done) return;
      if (method === 'GET' && /\/organisations(\?|$)/.test(path)) listings += 1;
      if (!(listings >= 2 || (method === 'PUT' && path.endsWith('/active')))) return;
      done = true;
      const res = await fetch(`${emulator.url}/api/organisations/v1/organisations/org_umbrella/active`, { method: 'PUT', headers: { authorization: 'Bearer demo-token' } });
      expect(res.status).toBe(200);
    });
    try {
      const through = { ...env, ORGFORM_BASE_URL: middle.url };
      const reviewed = await jsonDigest(cwd, through);
      armed = true;
      const apply = await spawnCli(['apply', '--expect-digest', reviewed, '--no-color'], { cwd, env: through });
      expect(done).toBe(true);
      expect(apply.code).toBe(1);
      expect(apply.stdout + apply.stderr).toContain('the active organisation changed on the service since the plan, from "org_initech" to "org_umbrella"');
    } finally {
      await middle.close();
    }
    expect(emulator.store.dump().users.find((u) => u.token === 'demo-token')?.active).toBe('org_umbrella');
    expect(emulator.requestLog.filter((r) => r.method === 'PUT' && r.path.endsWith('/org_acme/active'))).toEqual([]);
  });
});
