/**
 * One shared, adaptive rate for every request of a run, against the emulator's rate limit over
 * loopback: a 429 pauses everyone and is backpressure, not a failure; rate-limit headers set the
 * pace before any 429; --max-rps caps it; a run that gets nothing but 429s stops; bad values are
 * refused before anything is sent.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import type { RateEvent } from '../../src/api/rate-limiter.js';
import { STACK_LINE, startFaultProxy } from '../reliability/support.js';
import { setupBillingWorld, setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { runCli } from '../support/run-cli.js';

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
    const world = await setupBillingWorld(40, { rateLimit: { rps: 20, burst: 2 } });
    const result = await runCli(['apply', '--auto-approve', '--parallelism', '8', '--format', 'json'], { cwd: world.cwd, env: { ...world.env, ORGFORM_MAX_ATTEMPTS: '1' } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(world.changed()).toBe(40);
    expect(world.emulator.counters.rateLimited).toBeGreaterThan(0);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; reason?: string; rps?: number; paused_ms?: number });
    const rate = events.filter((e) => e.type === 'rate');
    expect(rate.length).toBeGreaterThan(0);
    expect(rate[0]).toMatchObject({ reason: 'throttled', paused_ms: 1000 });
    expect(typeof rate[0]!.rps).toBe('number');
    expect(events.at(-1)).toMatchObject({ type: 'apply_end', summary: { applied: 40, failed: 0 } });
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
    expect(times).toHaveLength(31);
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

  it.each(['0', '-1', '-0.5', 'abc', '', '1e3', 'Infinity', '5rps'])('refuses --max-rps %j before sending anything', async (value) => {
    const world = await setupBillingWorld(3);
    const result = await runCli(['plan', '--max-rps', value], { cwd: world.cwd, env: world.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--max-rps must be a number of requests per second above 0, such as 40 or 2.5');
    expect(world.emulator.counters.total).toBe(0);
  });

  it.each(['0', '-3', 'fast'])('refuses ORGFORM_MAX_RPS=%s before sending anything', async (value) => {
    const world = await setupBillingWorld(3);
    const result = await runCli(['apply', '--auto-approve'], { cwd: world.cwd, env: { ...world.env, ORGFORM_MAX_RPS: value } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`Error: ORGFORM_MAX_RPS must be a number of requests per second above 0, such as 40 or 2.5 (got "${value}").\n`);
    expect(world.emulator.counters.total).toBe(0);
    expect(await readFile(join(world.cwd, 'orgs.yaml'), 'utf8')).toContain('version: 1');
  });
});
