/** A temporary directory with config files in it, removed after the test. */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEachTest } from './after-each-test.js';

const made: string[] = [];

afterEachTest(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

export async function makeWorkspace(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'orgform-test-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** Declares changes against examples/emulator-data.json (user ada, token demo-token). */
export const CHANGING_CONFIG = `version: 1
activeOrganisation: acme
organisations:
  acme:
    billing:
      billingEmail: finance@acme.example
    invitations:
      revoke: [inv_acme_carol]
    notificationChannels:
      remove: [chn_acme_slack]
  globex:
    id: org_globex
    invitations:
      accept: [inv_globex_ada]
  initech: {}
`;

/** Matches examples/emulator-data.json as it is. */
export const MATCHING_CONFIG = `version: 1
activeOrganisation: initech
organisations:
  acme:
    billing:
      billingEmail: billing@acme.example
      customerID: cus_acme
  initech: {}
`;
