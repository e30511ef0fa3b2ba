import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { makeWorkspace } from '../support/workspace.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('orgform validate', () => {
  it('passes on the examples with a one-line summary', async () => {
    const result = await runCli(['validate', '-f', 'examples/orgs.yaml'], { cwd: ROOT });
    expect(result).toEqual({
      code: 0,
      stdout:
        'Valid: 4 organisations in 1 file, declaring billing for 4, 1 invitation to accept, 1 invitation to revoke, 1 notification channel to remove and acme as the active organisation.' +
        ' No service was read: orgform plan shows what would change.\n',
      stderr: '',
    });
  });

  it('reads every file of a directory, and repeated -f', async () => {
    const result = await runCli(['validate', '-f', 'examples/bulk', '-f', 'examples/orgs.yaml'], { cwd: ROOT });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Valid: 304 organisations in 4 files, declaring billing for 304, \d+ invitations to accept, \d+ invitations to revoke, \d+ notification channels to remove and acme as the active organisation\. /);
  });

  it('reads ./orgs.yaml by default and counts in the singular', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    invitations:\n      accept: [inv_1]\n' });
    const result = await runCli(['validate'], { cwd });
    expect(result.stdout).toBe('Valid: 1 organisation in 1 file, declaring 1 invitation to accept. No service was read: orgform plan shows what would change.\n');
  });

  it('counts declarations, not changes: the active organisation is one, and a file that declares nothing else says so', async () => {
    const active = await makeWorkspace({ 'orgs.yaml': 'version: 1\nactiveOrganisation: acme\norganisations:\n  acme: {}\n' });
    expect((await runCli(['validate'], { cwd: active })).stdout).toBe(
      'Valid: 1 organisation in 1 file, declaring acme as the active organisation. No service was read: orgform plan shows what would change.\n',
    );
    const bare = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme: {}\n  globex: {}\n' });
    expect((await runCli(['validate'], { cwd: bare })).stdout).toBe(
      'Valid: 2 organisations in 1 file, declaring nothing beyond the organisations. No service was read: orgform plan shows what would change.\n',
    );
  });

  it('prints every problem and their count on stderr, and exits 1', async () => {
    const cwd = await makeWorkspace({
      'a.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      customerId: x\n',
      'b.yaml': 'version: 3\n',
    });
    const result = await runCli(['validate', '-f', 'a.yaml', '-f', 'b.yaml'], { cwd });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: [
        'a.yaml:5:7: unknown key "customerId"; did you mean "customerID"? (orgs files use the update spelling: customerID, subscriptionID, platformID)',
        'b.yaml:1:10: unsupported version 3: this orgform reads version 1',
        '2 problems in 2 files.',
        '',
      ].join('\n'),
    });
  });

  it('needs no network: it passes with no service and no token configured', async () => {
    const result = await runCli(['validate', '-f', 'examples/orgs.yaml'], { cwd: ROOT, env: { ORGFORM_BASE_URL: 'http://127.0.0.1:9' } });
    expect(result.code).toBe(0);
  });

  it('prints warnings about invisible characters in values on stderr, escaped, and still passes', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      subscriptionID: "sub\u200b_acme"\n' });
    const result = await runCli(['validate'], { cwd });
    expect(result).toEqual({
      code: 0,
      stdout: 'Valid: 1 organisation in 1 file, declaring billing for 1. No service was read: orgform plan shows what would change.\n',
      stderr: 'orgs.yaml:5:23: warning: billing.subscriptionID "sub\\u200B_acme" holds U+200B, a zero-width character: it is sent as it is; remove it unless it is meant to be there\n',
    });
  });

  it('shows every character of a problem it quotes: an invisible one in a message from the schema is an escape', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: "b\u00ad@x"\n' });
    const result = await runCli(['validate'], { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('orgs.yaml:5:21: billing.billingEmail "b\\u00AD@x" is not an e-mail address\n');
    expect(result.stderr).not.toContain('\u00ad');
  });
});
