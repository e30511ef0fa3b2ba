/**
 * One shared, adaptive rate for every request of a run, against the emulator's rate limit over
 * loopback: a 429 pauses everyone and is backpressure, not a failure; rate-limit headers set the
 * pace before any 429; --max-rps caps it; a run that gets nothing but 429s stops; so does one whose
 * quota resets further ahead than orgform waits, saying when; bad values are refused before
 * anything is sent.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import type { RateEvent } from '../../src/api/rate/rate-gate.js';
import { STACK_LINE, startFaultProxy } from '../reliability/support.js';
import { setupBillingWorld, setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { MATRIX_PROFILES } from '../support/profiles.js';
import { runCli, spawnCli } from '../support/run-cli.js';

describe('the shared rate limiter over loopback', () => {
  it('a 429 with Retry-After: 1 pauses every request of the client, not only the one refused, and uses up no attempt', async () => {
    const { emulator } = await setupEmulatorWorkspace();
    let refused = false;
    const proxy = await startFaultProxy(emulator.url, (method, path) => {
      if (!refused && method === 'GET' && path.endsWith('/organisations/org_acme')) {
        refused = true;
        return { kind: 'status', status: 429, headers: { 'retry-after': '1' }, body: { code: 'rate_limited', message: 'Slow down.' } };
      }
      return { kind: 'pass' };
    });
    let throttled!: () => void;
    const throttledSeen = new Promise<void>((resolve) => (throttled = resolve));
    const events: RateEvent[] = [];
    // One attempt per request: a 429 that counted as one would fail it.
    const client = createClient({ baseUrl: proxy.url, token: 'demo-token', retryPolicy: { maxAttempts: 1 }, onRate: (e) => (events.push(e), e.reason === 'throttled' && throttled()) });
    try {
      const first = client.getOrganisation('org_acme');
      await throttledSeen;
      const refusedAt = proxy.records[0]!.at;
      // Seven more requests while the pause holds: none may reach the service before it ends.
      const others = ['org_globex', 'org_initech', 'org_acme', 'org_globex', 'org_initech', 'org_acme', 'org_globex'].map((id) => client.getOrganisation(id).catch((e: unknown) => e));
      const results = await Promise.all([first, ...others]);
      expect(results.every((r) => (r as { id?: string }).id !== undefined || (r as { status?: number }).status === 404)).toBe(true);
      expect((await first).id).toBe('org_acme');
      const after = proxy.records.slice(1);
      expect(after).toHaveLength(8);
      for (const r of after) expect(r.at - refusedAt).toBeGreaterThanOrEqual(990);
      expect(events[0]).toMatchObject({ reason: 'throttled', pausedMs: 1000 });
      expect(client.rateStatus().throttled).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('429s are backpressure: against a 20-a-second limit an apply converges with ORGFORM_MAX_ATTEMPTS=1, and says it was held back', async () => {
    // The emulator's token bucket answers Retry-After: 1, waited out in real time: the CLI has no
    // clock of its own to fake. 16 writes are enough to run into it (a burst of 2).
    const world = await setupBillingWorld(16, { rateLimit: { rps: 20, burst: 2 } });
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '8', '--format', 'json'], { cwd: world.cwd, env: { ...world.env, ORGFORM_MAX_ATTEMPTS: '1' } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(world.changed()).toBe(16);
    expect(world.emulator.counters.rateLimited).toBeGreaterThan(0);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; reason?: string; rps?: number; paused_ms?: number });
    const rate = events.filter((e) => e.type === 'rate');
    expect(rate.length).toBeGreaterThan(0);
    expect(rate[0]).toMatchObject({ reason: 'throttled', paused_ms: 1000 });
    expect(typeof rate[0]!.rps).toBe('number');
    expect(events.at(-1)).toMatchObject({ type: 'apply_end', summary: { applied: 16, failed: 0 } });
  });

  it.each(['ratelimit', 'x-ratelimit'] as const)('%s headers set the pace before the first 429: requests after the first answer are never refused', async (headers) => {
    const world = await setupBillingWorld(30, { rateLimit: { rps: 25, burst: 3, headers } });
    const client = createClient({ baseUrl: world.emulator.url, token: 'demo-token' });
    try {
      for await (const page of client.listOrganisationPages()) expect(page.organisations.length).toBeGreaterThan(0);
      expect(client.rateStatus().rps).toBeCloseTo(25 * 0.98, 5);
      await Promise.all(world.emulator.store.dump().organisations.map((o) => client.getOrganisation(o.id)));
      expect(world.emulator.counters.rateLimited).toBe(0);
      expect(world.emulator.counters.total).toBe(31);
    } finally {
      await client.close();
    }
  });

  it('--max-rps caps every request of the run, however many are in flight', async () => {
    const world = await setupBillingWorld(30);
    const proxy = await startFaultProxy(world.emulator.url);
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '16', '--max-rps', '20'], { cwd: world.cwd, env: { ...world.env, ORGFORM_BASE_URL: proxy.url } });
    expect(result.code).toBe(0);
    expect(world.changed()).toBe(30);
    const times = proxy.records.map((r) => r.at).sort((a, b) => a - b);
    // The plan's listing, the listing read again behind the writes, 30 writes.
    expect(times).toHaveLength(32);
    // Never more than 20 (and one of slack for timer rounding) within any second.
    const most = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));
    expect(most).toBeLessThanOrEqual(21);
  });

  it('stops a run that gets nothing but 429s for ORGFORM_NO_PROGRESS_TIMEOUT_MS: no new change starts, and it says why', async () => {
    const world = await setupBillingWorld(12);
    world.emulator.faults.add({ operation: 'updateBillingDetails', times: Infinity, fault: { kind: 'status', status: 429, retryAfter: 1 } });
    const started = Date.now();
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '4'], { cwd: world.cwd, env: { ...world.env, ORGFORM_NO_PROGRESS_TIMEOUT_MS: '1500' } });
    expect(result.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.stderr).toContain('Error: No request succeeded for 1.5 s: the service kept answering 429 (too many requests). Run again later; what was done is recorded, and apply picks up from there.');
    expect(result.stdout).toMatch(/not started/);
    expect(result.stdout).toMatch(/Apply interrupted: 0 applied/);
    expect(result.stderr).not.toMatch(STACK_LINE);
    // Each change attempted went out at most a few times, not in a loop.
    expect(world.emulator.counters.byOperation.updateBillingDetails).toBeLessThan(40);
  });

  it.each(
    MATRIX_PROFILES.flatMap((profile) =>
      [
        // A daily quota, its reset a day ahead; and one 3,000,000 s ahead, beyond what a timer can hold (it spun the CPU).
        { profile, headers: 'ratelimit', windowSeconds: 86_400 },
        { profile, headers: 'x-ratelimit', windowSeconds: 86_400 },
        { profile, headers: 'ratelimit', windowSeconds: 3_000_000 },
      ] as const,
    ),
  )(
    'an empty quota announced by $headers headers, resetting in $windowSeconds s, stops the run at once and says when it resets ($profile)',
    async ({ profile, headers, windowSeconds }) => {
      const world = await setupBillingWorld(3, { profile, quota: { requests: 1, windowSeconds, headers } });
      const started = Date.now();
      // The built CLI, so that a warning of Node's (a timer it cannot hold) would show too.
      const result = await spawnCli(['apply', '--auto-approve'], { cwd: world.cwd, env: world.env });
      const resetsAt = new Date(Math.ceil((started + windowSeconds * 1000) / 1000) * 1000);
      expect(result.code).toBe(1);
      const said = /[Tt]he service's request quota is used up until (\S+Z), in [\d.]+ (hours|days): longer than the 10 minutes orgform waits out a rate limit \(ORGFORM_NO_PROGRESS_TIMEOUT_MS\)\. Run again after \1/.exec(result.stdout + result.stderr);
      expect(said).not.toBeNull();
      expect(Math.abs(Date.parse(said![1]!) - resetsAt.getTime())).toBeLessThanOrEqual(60_000);
      expect(result.stderr).not.toContain('TimeoutOverflowWarning');
      expect(result.stderr).not.toMatch(STACK_LINE);
      // Nothing beyond the quota was sent, and nothing was changed.
      expect(world.emulator.counters.total).toBe(1);
      expect(world.changed()).toBe(0);
    },
  );

  it.each(['0', '-1', '-0.5', 'abc', '', '1e3', 'Infinity', '5rps', '0.0001', '100001'])('refuses --max-rps %j before sending anything', async (value) => {
    const world = await setupBillingWorld(3);
    const result = await runCli(['plan', '--max-rps', value], { cwd: world.cwd, env: world.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--max-rps must be a number of requests per second from 0.001 to 100000, such as 40 or 2.5');
    expect(world.emulator.counters.total).toBe(0);
  });

  it.each([
    ['ORGFORM_REQUEST_TIMEOUT_MS', '2147483648', 'a whole number from 100 to 86400000'],
    ['ORGFORM_NO_PROGRESS_TIMEOUT_MS', '3000000000', 'a whole number from 1 to 86400000'],
    ['ORGFORM_RETRY_BASE_MS', '86400000', 'a whole number from 1 to 10000'],
    ['ORGFORM_TOKEN_COMMAND_TIMEOUT_MS', '99', 'a whole number from 100 to 600000'],
    ['ORGFORM_MAX_ATTEMPTS', '1000', 'a whole number from 1 to 100'],
  ])('refuses %s=%s, outside its range, before sending anything, naming the variable, the range and the value', async (name, value, range) => {
    const world = await setupBillingWorld(3);
    const result = await runCli(['plan'], { cwd: world.cwd, env: { ...world.env, [name]: value } });
    // Before, a request timeout of 2^31 ms became a timer of 1 ms: every request failed at once.
    expect(result.stderr).toBe(`Error: ${name} must be ${range} (got "${value}").\n`);
    expect(result.code).toBe(1);
    expect(world.emulator.counters.total).toBe(0);
  });

  it.each(['0', '-3', 'fast', '0.0001'])('refuses ORGFORM_MAX_RPS=%s before sending anything', async (value) => {
    const world = await setupBillingWorld(3);
    const result = await runCli(['apply', '--auto-approve'], { cwd: world.cwd, env: { ...world.env, ORGFORM_MAX_RPS: value } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`Error: ORGFORM_MAX_RPS must be a number of requests per second from 0.001 to 100000, such as 40 or 2.5 (got "${value}").\n`);
    expect(world.emulator.counters.total).toBe(0);
    expect(await readFile(join(world.cwd, 'orgs.yaml'), 'utf8')).toContain('version: 1');
  });
});
