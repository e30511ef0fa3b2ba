/**
 * Listings a hostile but plausible service gives, page by page as the test scripts them, on a
 * loopback server: one that ends before the organisations its totalCount counts, one whose
 * totalCount moves as organisations come and go while it is read, one that lists the active
 * organisation first and again at its place, and one with an organisation twice on a page. plan
 * and export, in-process, against it.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { afterEachTest } from '../support/after-each-test.js';
import { runCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const servers: Server[] = [];
afterEachTest(() => Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done)))));

interface Page {
  ids: number[];
  totalCount?: number;
  /** Never answered (a service slow to answer it). */
  held?: boolean;
}

const organisation = (n: number) => ({ id: `org_${n}`, slug: `o${n}`, billing: { billingEmail: `b${n}@example.com` } });

/** A service whose listing is `pages` (page i's `next` is the cursor `i + 1`, none on the last), and whose reads by id answer any `org_N`. */
async function listingService(pages: Page[]): Promise<{ cwd: string; env: Record<string, string> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://service');
    res.setHeader('content-type', 'application/json');
    if (url.pathname.endsWith('/organisations')) {
      const index = Number(url.searchParams.get('cursor') ?? 0);
      const page = pages[index]!;
      if (page.held === true) return;
      res.end(JSON.stringify({ organisations: page.ids.map(organisation), next: index + 1 < pages.length ? String(index + 1) : '', ...(page.totalCount === undefined ? {} : { totalCount: page.totalCount }) }));
      return;
    }
    const byId = /\/organisations\/org_(\d+)$/.exec(url.pathname);
    if (byId) {
      res.end(JSON.stringify(organisation(Number(byId[1]))));
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ code: 'not_found', message: 'no such route' }));
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  o9:\n    billing:\n      billingEmail: new@example.com\n' });
  return { cwd, env: { ORGFORM_TOKEN: 'hostile-listing-token', ORGFORM_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ORGFORM_RETRY_BASE_MS: '10' } };
}

describe('a listing that ends before the organisations its totalCount counts', () => {
  const short: Page[] = [
    { ids: [0, 1, 2], totalCount: 10 },
    { ids: [3, 4, 5], totalCount: 10 },
  ];

  it('fails export, naming where it stopped, and writes no file', async () => {
    const world = await listingService(short);
    const result = await runCli(['export', '--out', 'all.yaml'], world);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('page 2 ends the listing (it has no "next") after 6 organisations, though every page\'s totalCount counted at least 10');
    expect(result.stderr).toContain('nothing is made from a partial listing');
    await expect(readFile(join(world.cwd, 'all.yaml'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('fails plan the same way, rather than tell you that you do not belong to the organisations it did not reach', async () => {
    const result = await runCli(['plan'], await listingService(short));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('though every page\'s totalCount counted at least 10');
    expect(result.stdout + result.stderr).not.toContain('not among the organisations you belong to');
  });

  it('is whole when organisations come and go as it is read: a totalCount that falls with them, or grows', async () => {
    // One removed ahead of the pages read (the count falls to 9, and 9 are listed); then one added
    // behind them (the count grows to 10, and the listing does not hold it): nothing is missing
    // from the organisations that were there all along.
    const world = await listingService([
      { ids: [0, 1, 2], totalCount: 10 },
      { ids: [3, 4, 5], totalCount: 9 },
      { ids: [6, 7, 9], totalCount: 10 },
    ]);
    const result = await runCli(['export', '--out', 'all.yaml'], world);
    expect([result.code, result.stderr]).toEqual([0, 'Exported 9 organisations (active: o0) to all.yaml. Check it with: orgform plan -f all.yaml\n']);
  });
});

describe('a listing whose empty page points on though it holds every organisation its totalCount counts', () => {
  it('fails plan at once: the page after, asked for before the empty page was checked and slow to come, is let go, not waited for', async () => {
    // Page 3 is asked for from page 2's text, before page 2 is parsed and refused. Waited for, it
    // would hold the run's end until the request's deadline (30 s, past the test's time).
    const result = await runCli(['plan'], await listingService([{ ids: [9], totalCount: 1 }, { ids: [], totalCount: 1 }, { ids: [], held: true }]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('more pages than totalCount allows');
    expect(result.stdout + result.stderr).not.toContain('Waiting for the answer to page 3');
  });
});

describe('a listing that heads its first page with the active organisation and lists it again at its place', () => {
  // The interface: "the first item of the first page is always the active organisation"; a service
  // may put it there besides its place in the order, rather than move it.
  const headed: Page[] = [{ ids: [5, 0, 1, 2] }, { ids: [3, 4, 5] }, { ids: [6, 7, 8, 9] }];

  it('is whole: plan reaches the organisations after it', async () => {
    const result = await runCli(['plan', '--detailed-exitcode'], await listingService(headed));
    expect([result.code, result.stderr]).toEqual([2, '']);
    expect(result.stdout).toContain('billingEmail: "b9@example.com" → "new@example.com"');
  });

  it('is exported with the active organisation once', async () => {
    const world = await listingService(headed);
    const result = await runCli(['export', '--out', 'all.yaml'], world);
    expect([result.code, result.stderr]).toEqual([0, 'Exported 10 organisations (active: o5) to all.yaml. Check it with: orgform plan -f all.yaml\n']);
    expect((await readFile(join(world.cwd, 'all.yaml'), 'utf8')).match(/^ {4}id: org_5$/gm)).toHaveLength(1);
  });

  it('still stops at a cycle that leads back to the first page, head and all', async () => {
    const result = await runCli(['plan'], await listingService([{ ids: [5, 0, 1] }, { ids: [2, 3, 4] }, { ids: [5, 0, 1] }, { ids: [9] }]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('organisation "org_0" is listed again on page 3, after page 1');
  });
});

describe('an organisation listed twice', () => {
  it('on one page: plan stops, saying so, not that the links lead round in a circle', async () => {
    const result = await runCli(['plan'], await listingService([{ ids: [0, 1, 2] }, { ids: [3, 3, 4] }, { ids: [9] }]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('organisation "org_3" is listed twice on page 2.');
    expect(result.stderr).not.toContain('cycle');
  });

  it('on a later page, as when an organisation is added ahead of a listing read by offset: plan stops, naming both causes', async () => {
    const result = await runCli(['plan'], await listingService([{ ids: [0, 1, 2] }, { ids: [2, 3, 4] }, { ids: [9] }]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'organisation "org_2" is listed again on page 2, after page 1: the "next" links lead back over pages already read (a cycle), or the listing moved while it was read (organisations added or removed before the place it had reached).',
    );
  });
});
