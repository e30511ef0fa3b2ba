/**
 * Every wait speaks (issue 31), for each thing a run may wait for at the service: a quota used up
 * until its reset, a backoff before a retry, the pace orgform holds itself to, and a page read
 * ahead whose answer does not come. plan, the built CLI against the emulator over loopback, says
 * within a few seconds what it waits for and until when; then the test interrupts it.
 */
import { describe, expect, it } from 'vitest';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import type { EmulatorOptions } from '../../src/emulator/server.js';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { watchCli } from '../support/run-cli.js';
import { CHANGING_CONFIG } from '../support/workspace.js';

/** 60 organisations in pages of 50: a listing of two pages. */
function twoPages(options: EmulatorOptions = {}) {
  return setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG }, { data: generateEmulatorData({ organisations: 60 }), ...options, behaviour: { 'page-size': 'fixed-50', ...options.behaviour } });
}

/** The first wait line plan writes, once it has written it; the run is then interrupted. */
async function firstWait(args: string[], world: { cwd: string; env: Record<string, string> }): Promise<string> {
  const run = watchCli(['plan', ...args], world);
  const stderr = await run.written('stderr', /^Waiting.*\n/m);
  run.kill('SIGINT');
  await run.done;
  return /^Waiting.*$/m.exec(stderr)![0];
}

describe('plan says what it waits for at the service, and until when', () => {
  it('a quota used up until its reset', async () => {
    const world = await twoPages({ quota: { requests: 1, windowSeconds: 300 } });
    expect(await firstWait([], world)).toMatch(/^Waiting until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC \(in 5 min\): the service's request quota is used up until then; page 2 of the listing \(all pages\) waits\.$/);
  });

  it('a backoff before a retry', async () => {
    const world = await twoPages();
    world.emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'status', status: 503, retryAfter: 30 } });
    expect(await firstWait([], world)).toMatch(/^Waiting until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC \(in \d+ s\) to send the first page of the listing \(all pages\) again, after HTTP 503\.$/);
  });

  it('the pace it holds itself to', async () => {
    const world = await twoPages();
    expect(await firstWait(['--max-rps', '0.2'], world)).toMatch(/^Waiting: requests go at 0\.2 a second, the rate the service allows \(or --max-rps\); page 2 of the listing \(all pages\) waits, the last until about \d\d:\d\d:\d\d UTC \(in \d+ s\)\.$/);
  });

  it('a page read ahead whose answer does not come', async () => {
    const world = await twoPages();
    // The first page at once; the second, read ahead while the first is worked through, held.
    world.emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'delay-headers', ms: 0 } });
    world.emulator.faults.add({ operation: 'getOrganisations', fault: { kind: 'hang' } });
    expect(await firstWait([], world)).toMatch(/^Waiting for the answer to page 2 of the listing \(all pages\): none yet; orgform gives up at \d\d:\d\d:\d\d UTC \(in \d+ s\)\.$/);
  });
});
