/**
 * Every wait speaks (issue 31): the first request of a run answered 429 with `Retry-After: 200`.
 * plan, apply (while it plans, in text and in JSON), export and slugs check each say, within a few
 * seconds and before anything else, that they wait and until when; then the test interrupts them
 * rather than wait 200 s. The built CLI against the emulator over loopback, no terminal (as in CI).
 */
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { watchCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

const RATE_LIMITED = /^Waiting until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC \(in 3 min\): the service answered 429 \(too many requests\), and every request waits; the first page of the listing \(all pages\) waits\.$/m;

async function rateLimited(operation: 'getOrganisations' | 'getSlugAvailability') {
  const world = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
  world.emulator.faults.add({ operation, fault: { kind: 'status', status: 429, retryAfter: 200 } });
  return world;
}

describe('a 429 with Retry-After: 200 on the first request', () => {
  it('plan says it waits, and until when, on standard error', async () => {
    const { cwd, env } = await rateLimited('getOrganisations');
    const run = watchCli(['plan'], { cwd, env });
    const stderr = await run.written('stderr', /^Waiting until .*\n/m);
    expect(stderr).toMatch(RATE_LIMITED);
    run.kill('SIGINT');
    const { stdout } = await run.done;
    expect(stdout).not.toContain('Plan:');
  });

  it('apply says so while it plans, before anything is shown, and writes nothing', async () => {
    const { cwd, env, emulator } = await rateLimited('getOrganisations');
    const run = watchCli(['apply', '--auto-approve'], { cwd, env });
    const stderr = await run.written('stderr', /^Waiting until .*\n/m);
    expect(stderr).toMatch(RATE_LIMITED);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    run.kill('SIGINT');
    const { stdout, code } = await run.done;
    expect([code, stdout]).toEqual([1, '\nApply cancelled. Nothing was changed.\n']);
    expect(emulator.counters.writes).toBe(0);
  });

  it('apply --format json says so as a wait event, the first line of its output', async () => {
    const { cwd, env } = await rateLimited('getOrganisations');
    const run = watchCli(['apply', '--auto-approve', '--format', 'json'], { cwd, env });
    const stdout = await run.written('stdout', /\n/);
    run.kill('SIGINT');
    const event = JSON.parse(stdout.split('\n')[0]!) as Record<string, unknown>;
    expect(event).toMatchObject({ type: 'wait', reason: 'rate_limit', what: 'the first page of the listing (all pages)', waiting: 1 });
    expect((event.until as number) - (event.at as number)).toBeGreaterThan(190_000);
    await run.done;
  });

  it('export says so', async () => {
    const { cwd, env } = await rateLimited('getOrganisations');
    const run = watchCli(['export'], { cwd, env });
    expect(await run.written('stderr', /^Waiting until .*\n/m)).toMatch(RATE_LIMITED);
    run.kill('SIGINT');
    expect((await run.done).stdout).toBe('');
  });

  it('slugs check says so, naming the slug', async () => {
    const { cwd, env } = await rateLimited('getSlugAvailability');
    const run = watchCli(['slugs', 'check', 'new-slug'], { cwd, env });
    const stderr = await run.written('stderr', /^Waiting until .*\n/m);
    expect(stderr).toMatch(/^Waiting until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC \(in 3 min\): the service answered 429 \(too many requests\), and every request waits; the check of slug "new-slug" waits\.$/m);
    run.kill('SIGINT');
    await run.done;
  });
});
