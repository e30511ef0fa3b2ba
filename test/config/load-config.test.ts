import { createHash } from 'node:crypto';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadConfig, type LoadResult } from '../../src/config/load-config.js';
import { MAX_FILE_BYTES } from '../../src/config/parse-source.js';
import { makeWorkspace } from '../support/workspace.js';

const ACME = 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: b@acme.example\n';

function lines(result: LoadResult): string[] {
  return result.ok ? [] : result.problems.map(formatProblem);
}

async function load(cwd: string, paths: string[], env: Record<string, string> = {}) {
  return loadConfig(paths, { cwd, variables: env });
}

describe('loadConfig reading files', () => {
  it('reads ./orgs.yaml when no file is named', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': ACME });
    const result = await load(cwd, []);
    expect(result.ok && result.state.organisations.map((o) => o.slug)).toEqual(['acme']);
    expect(result.ok && result.state.files.map((f) => f.path)).toEqual(['orgs.yaml']);
  });

  it('says how to name files when ./orgs.yaml is missing', async () => {
    const cwd = await makeWorkspace();
    expect(lines(await load(cwd, []))).toEqual(['orgs.yaml:1:1: cannot read: no such file or directory (name your files with -f)']);
  });

  it('records the SHA-256 of each file, as read', async () => {
    const cwd = await makeWorkspace({ 'a.yaml': ACME });
    const result = await load(cwd, ['a.yaml']);
    expect(result.ok && result.state.files).toEqual([{ path: 'a.yaml', sha256: createHash('sha256').update(ACME).digest('hex') }]);
  });

  it('reads every *.yaml and *.yml of a directory, sorted, and nothing else', async () => {
    const cwd = await makeWorkspace({
      'conf/b.yml': 'version: 1\norganisations:\n  beta: {}\n',
      'conf/a.yaml': 'version: 1\norganisations:\n  alpha: {}\n',
      'conf/c.yaml.bak': 'not: read',
      'conf/.hidden.yaml': 'not: read',
      'conf/notes.txt': 'not read',
      'conf/sub/d.yaml': 'not: read',
    });
    const result = await load(cwd, ['conf']);
    expect(result.ok && result.state.files.map((f) => f.path)).toEqual([join('conf', 'a.yaml'), join('conf', 'b.yml')]);
  });

  it('refuses a dangling symbolic link among the *.yaml of a directory, naming the link and where it points', async () => {
    const cwd = await makeWorkspace({ 'conf/a.yaml': ACME, 'gone.yaml': 'version: 1\norganisations:\n  beta: {}\n' });
    await symlink(join(cwd, 'gone.yaml'), join(cwd, 'conf', 'b.yaml'));
    await symlink('c.yaml', join(cwd, 'conf', 'c.yaml'));
    await rm(join(cwd, 'gone.yaml'));
    expect(lines(await load(cwd, ['conf']))).toEqual([
      `conf/b.yaml:1:1: cannot read: a symbolic link to ${JSON.stringify(join(cwd, 'gone.yaml'))}, which does not exist. Its organisations would drop out of management: fix the link, or remove it`,
      'conf/c.yaml:1:1: cannot read: a symbolic link that leads back to itself. Its organisations would drop out of management: fix the link, or remove it',
    ]);
  });

  it('reports a directory without orgs files', async () => {
    const cwd = await makeWorkspace({ 'empty/readme.txt': 'x', 'empty/not-a-file.yaml/readme.txt': 'x' });
    expect(lines(await load(cwd, ['empty']))).toEqual(['empty:1:1: no *.yaml or *.yml files in this directory']);
  });

  it('reads a file named twice only once', async () => {
    const cwd = await makeWorkspace({ 'conf/orgs.yaml': ACME });
    await symlink(join(cwd, 'conf', 'orgs.yaml'), join(cwd, 'link.yaml'));
    const result = await load(cwd, ['conf/orgs.yaml', 'conf', 'link.yaml']);
    expect(result.ok && result.state.files.map((f) => f.path)).toEqual(['conf/orgs.yaml']);
  });

  it('reports problems in the order the files were named, each as given', async () => {
    const cwd = await makeWorkspace({ 'b.yaml': 'version: 2\n', 'a.yaml': 'organisations: {}\n' });
    expect(lines(await load(cwd, ['./b.yaml', 'a.yaml', 'missing.yaml']))).toEqual([
      './b.yaml:1:10: unsupported version 2: this orgform reads version 1',
      'a.yaml:1:1: missing "version: 1": every orgs file starts with its format version',
      'missing.yaml:1:1: cannot read: no such file or directory',
    ]);
  });

  it('names both places when two files declare the same organisation', async () => {
    const cwd = await makeWorkspace({ 'a.yaml': ACME, 'b.yaml': 'version: 1\norganisations:\n  beta: {}\n  acme: {}\n' });
    expect(lines(await load(cwd, ['a.yaml', 'b.yaml']))).toEqual(['b.yaml:4:3: organisation "acme" is already declared at a.yaml:3:3']);
  });

  it('points back across files at the first of an id, an invitation and the active organisation, file by file', async () => {
    const cwd = await makeWorkspace({
      'a.yaml': 'version: 1\nactiveOrganisation: acme\norganisations:\n  acme:\n    id: org_1\n    invitations:\n      accept: [inv_1]\n',
      'b.yaml': 'version: 1\nactiveOrganisation: beta\norganisations:\n  beta:\n    id: org_1\n    invitations:\n      revoke: [inv_1]\n',
      'c.yaml': 'version: 1\norganisations:\n  gamma:\n    invitations:\n      accept: [inv_2, inv_2]\n',
    });
    expect(lines(await load(cwd, ['a.yaml', 'b.yaml', 'c.yaml']))).toEqual([
      'b.yaml:2:21: activeOrganisation is already set at a.yaml:2:21: set it in one file only',
      'b.yaml:5:9: id "org_1" is also the id of organisation "acme" (a.yaml:5:9)',
      'b.yaml:7:16: invitation "inv_1" is also listed under organisation "acme" (a.yaml:7:16)',
      'c.yaml:5:23: invitation "inv_2" is listed twice (first at line 5, column 16)',
    ]);
  });

  it('gives organisations without invitations or channels lists that cannot be changed through another', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme: {}\n  beta: {}\n  gamma:\n    invitations:\n      accept: [inv_1]\n' });
    const result = await load(cwd, []);
    if (!result.ok) throw new Error('expected a valid configuration');
    const [acme, beta, gamma] = result.state.organisations;
    expect(() => (acme!.invitations.accept as string[]).push('inv_x')).toThrow(TypeError);
    expect(() => (acme!.notificationChannels.remove as string[]).push('ch_x')).toThrow(TypeError);
    expect(beta!.invitations.accept).toEqual([]);
    expect(gamma!.invitations).toEqual({ accept: ['inv_1'], revoke: [] });
  });

  it('merges defaults only under the organisations of their own file', async () => {
    const cwd = await makeWorkspace({
      'a.yaml': 'version: 1\ndefaults:\n  billing:\n    platformID: stripe\norganisations:\n  acme: {}\n',
      'b.yaml': 'version: 1\norganisations:\n  beta: {}\n',
    });
    const result = await load(cwd, ['a.yaml', 'b.yaml']);
    expect(result.ok && result.state.organisations.map((o) => [o.slug, o.billing])).toEqual([
      ['acme', { platformID: 'stripe' }],
      ['beta', undefined],
    ]);
  });

  it('interpolates ${VAR} from the environment it is given, not the process', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: ${ORGFORM_VAR_EMAIL}\n' });
    const result = await load(cwd, [], { ORGFORM_VAR_EMAIL: 'x@acme.example' });
    expect(result.ok && result.state.organisations[0]?.billing).toEqual({ billingEmail: 'x@acme.example' });
    expect(lines(await load(cwd, []))).toEqual(['orgs.yaml:5:21: billing.billingEmail: environment variable ORGFORM_VAR_EMAIL is not set']);
  });
});

describe('loadConfig and values from the environment', () => {
  it('names a value from the environment as written in every message about it, never by its value', async () => {
    const cwd = await makeWorkspace({
      'orgs.yaml': [
        'version: 1',
        'organisations:',
        '  acme:',
        '    id: ${ORGFORM_VAR_ID}',
        '    billing:',
        '      billingEmail: ${ORGFORM_VAR_EMAIL}',
        '    invitations:',
        '      accept: ["${ORGFORM_VAR_INV}", "${ORGFORM_VAR_INV}"]',
        '      revoke: ["${ORGFORM_VAR_PADDED}", "${ORGFORM_VAR_DOTS}"]',
        '  beta:',
        '    id: ${ORGFORM_VAR_ID}',
        '',
      ].join('\n'),
    });
    const env = { ORGFORM_VAR_ID: 'org_canary_id', ORGFORM_VAR_EMAIL: 'canary-not-an-email', ORGFORM_VAR_INV: 'inv_canary', ORGFORM_VAR_PADDED: ' inv_canary_padded', ORGFORM_VAR_DOTS: '..' };
    const found = lines(await load(cwd, [], env));
    expect(found).toEqual([
      'orgs.yaml:6:21: billing.billingEmail "${ORGFORM_VAR_EMAIL}" (its value is not shown) is not an e-mail address',
      'orgs.yaml:8:38: invitation "${ORGFORM_VAR_INV}" (its value is not shown) is listed twice (first at line 8, column 16)',
      'orgs.yaml:9:16: invitation id "${ORGFORM_VAR_PADDED}" (its value is not shown) must not start or end with whitespace',
      'orgs.yaml:9:41: invitation id "${ORGFORM_VAR_DOTS}" (its value is not shown) must not be "." or "..": it would change the URL path',
      'orgs.yaml:11:9: id "${ORGFORM_VAR_ID}" (its value is not shown) is also the id of organisation "acme" (line 4)',
    ]);
    expect(found.join('\n')).not.toMatch(/canary/);
  });
});

describe('loadConfig refusing what is not YAML text', () => {
  it('never quotes the text of a file that is not YAML: a git config gives positions and token kinds only', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': '[core]\n\trepositoryformatversion = 0\n[http "https://github.example/"]\n\textraheader = AUTHORIZATION: basic Y2FuYXJ5LXNlY3JldA==\n' });
    const found = lines(await load(cwd, []));
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).not.toMatch(/Y2FuYXJ5|basic|extraheader/);
  });

  it('keeps what the parser says bounded: ten errors and how many more, tags and aliases cut, any message cut at 1,000 characters', async () => {
    const cwd = await makeWorkspace({
      'many.yaml': `version: 1\n${']]]]\n'.repeat(200)}`,
      'tag.yaml': `version: 1\norganisations: !${'t'.repeat(5_000)} {}\n`,
      'alias.yaml': `version: 1\norganisations: *${'a'.repeat(5_000)}\n`,
      'long.yaml': `version: 1\norganisations:\n  acme:\n    billing:\n      platformID: "\${ORGFORM_VAR_P}${'y'.repeat(5_000)}"\n`,
    });
    const many = lines(await load(cwd, ['many.yaml']));
    expect(many).toHaveLength(11);
    expect(many[10]).toMatch(/^many\.yaml:\d+:\d+: and 790 more YAML errors after this one, not listed/);
    for (const file of ['tag.yaml', 'alias.yaml']) {
      const found = lines(await load(cwd, [file]));
      expect(found.length).toBeGreaterThan(0);
      for (const line of found) expect(line.length).toBeLessThan(400);
    }
    const long = await load(cwd, ['long.yaml'], { ORGFORM_VAR_P: 'p\u200b' });
    expect(long.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^billing\.platformID "\$\{ORGFORM_VAR_P\}y+… \(cut\)$/)]);
    expect(long.warnings[0]!.message.length).toBeLessThanOrEqual(1_010);
  });

  it('refuses a file over the size limit before reading it, and says the limit', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'big.yaml'), Buffer.alloc(MAX_FILE_BYTES + 1, '#'));
    expect(lines(await load(cwd, ['big.yaml']))).toEqual([
      'big.yaml:1:1: file is 4.0 MiB, over the 4 MiB limit: split it into several files in a directory and pass that with -f',
    ]);
  });

  it('refuses a binary file, pointing at the first NUL byte', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'bin.yaml'), Buffer.from('version: 1\nab\0cd\n'));
    expect(lines(await load(cwd, ['bin.yaml']))).toEqual(['bin.yaml:2:3: binary file (a NUL byte here): expected YAML text']);
  });

  it('refuses invalid UTF-8, pointing at the first bad byte', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'latin1.yaml'), Buffer.concat([Buffer.from('version: 1\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    expect(lines(await load(cwd, ['latin1.yaml']))).toEqual(['latin1.yaml:2:6: not valid UTF-8 (the first bad byte is here): save the file as UTF-8']);
  });

  it('refuses UTF-16 text with a hint', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'wide.yaml'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('version: 1\n', 'utf16le')]));
    expect(lines(await load(cwd, ['wide.yaml']))).toEqual(['wide.yaml:1:1: file is UTF-16 text: save it as UTF-8']);
  });

  it('reads CRLF line ends and a UTF-8 byte-order mark as plain text', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'windows.yaml'), `\uFEFF${ACME.replaceAll('\n', '\r\n')}`);
    await writeFile(join(cwd, 'unix.yaml'), ACME);
    const windows = await load(cwd, ['windows.yaml']);
    const unix = await load(cwd, ['unix.yaml']);
    const organisations = (r: LoadResult) => (r.ok ? r.state.organisations.map(({ source, ...o }) => ({ ...o, line: source.line, col: source.col })) : r.problems);
    expect(organisations(windows)).toEqual(organisations(unix));
  });

  it('reads a file whose lines end with CR alone (valid YAML 1.2) as the YAML it is, with positions on the right lines', async () => {
    const cwd = await makeWorkspace();
    await writeFile(join(cwd, 'mac.yaml'), ACME.replaceAll('\n', '\r'));
    await writeFile(join(cwd, 'unix.yaml'), ACME);
    const organisations = (r: LoadResult) => (r.ok ? r.state.organisations.map(({ source, ...o }) => ({ ...o, line: source.line, col: source.col })) : r.problems);
    expect(organisations(await load(cwd, ['mac.yaml']))).toEqual(organisations(await load(cwd, ['unix.yaml'])));
    // Through the yaml package too (an anchor keeps the fast parser out), and a problem on line 5.
    await writeFile(join(cwd, 'bad.yaml'), 'version: 1\rorganisations:\r  acme: &a\r    billing:\r      customerID: 0123\r  beta: *a\r');
    await writeFile(join(cwd, 'nul.yaml'), 'version: 1\rorganisations:\r  ac\0me: {}\r');
    expect(lines(await load(cwd, ['bad.yaml', 'nul.yaml']))).toEqual([
      'bad.yaml:5:19: billing.customerID: unquoted 0123 would be read as a number, not a string: quote it: "0123"',
      'nul.yaml:3:5: binary file (a NUL byte here): expected YAML text',
    ]);
  });

  it('rejects an alias bomb quickly, without expanding it', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) levels.push(`l${i}: &l${i} [${Array(10).fill(i === 1 ? '*a' : `*l${i - 1}`).join(', ')}]`);
    const cwd = await makeWorkspace({ 'bomb.yaml': `version: 1\n${levels.join('\n')}\n` });
    const started = Date.now();
    const result = await load(cwd, ['bomb.yaml']);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines(result)).toEqual([
      'bomb.yaml:10:10: aliases expand this document to more than a billion nodes, over the 5,100 allowed for its size (10 per character): an alias bomb? The file is rejected; the alias that expands the most is here',
    ]);
  });

  it('rejects a long string repeated by aliases: few nodes, but gigabytes of text once expanded', async () => {
    const uses = Array.from({ length: 200 }, (_, i) => `  o${i}: {billing: {customerID: *big}}`);
    const cwd = await makeWorkspace({ 'long.yaml': `version: 1\nbig: &big "${'x'.repeat(20_000)}"\norganisations:\n${uses.join('\n')}\n` });
    expect(lines(await load(cwd, ['long.yaml']))).toEqual([
      'long.yaml:4:30: aliases expand this document to 4,024,114 characters of text, over the 275,290 allowed for its size (10 per character): an alias bomb? The file is rejected; the alias that expands the most is here',
    ]);
  });

  it('rejects a document nested hundreds of levels deep, saying so rather than that a stack ran out', async () => {
    const cwd = await makeWorkspace({ 'deep.yaml': `version: 1\nx: ${'['.repeat(2_000)}${']'.repeat(2_000)}\n` });
    const found = lines(await load(cwd, ['deep.yaml']));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^deep\.yaml:2:\d+: nested too deeply for the YAML parser \(hundreds of mappings or lists inside one another\); an orgs file needs five levels at most$/);
  });

  it('says it once however much stack was used before the parse began (a worker that ran other files first)', async () => {
    const cwd = await makeWorkspace({ 'deep.yaml': `version: 1\nx: ${'['.repeat(2_000)}${']'.repeat(2_000)}\n` });
    // Each frame leaves less stack to the parser, which then runs out more than once on the way back.
    const deepen = (frames: number): Promise<LoadResult> => (frames === 0 ? load(cwd, ['deep.yaml']) : deepen(frames - 1));
    const found = lines(await deepen(3_000));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/nested too deeply for the YAML parser/);
  });

  it('rejects a large node repeated by aliases, which the yaml package lets through', async () => {
    const big = `[${Array(20_000).fill('x').join(', ')}]`;
    const cwd = await makeWorkspace({ 'wide.yaml': `version: 1
big: &big ${big}
uses: [${Array(60).fill('*big').join(', ')}]
` });
    expect(lines(await load(cwd, ['wide.yaml']))).toEqual([
      'wide.yaml:3:8: aliases expand this document to 1,220,067 nodes, over the 603,890 allowed for its size (10 per character): an alias bomb? The file is rejected; the alias that expands the most is here',
    ]);
  });
});

describe('loadConfig placing YAML syntax errors', () => {
  it('places a mis-indented key where it starts, not at the start of its line', async () => {
    const cwd = await makeWorkspace({
      'key.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: a@b.example\n      customerID: cus_1\n     subscriptionID: sub_1\n',
      'item.yaml': 'version: 1\norganisations:\n  acme:\n    invitations:\n      accept:\n        - inv_1\n       - inv_2\n',
      'tab.yaml': 'version: 1\norganisations:\n  acme:\n\tbilling: {}\n',
    });
    expect(lines(await load(cwd, ['key.yaml']))).toEqual(['key.yaml:7:6: All mapping items must start at the same column']);
    expect(lines(await load(cwd, ['item.yaml']))[0]).toMatch(/^item\.yaml:7:8: /);
    // A tab is the mistake itself: pointed at where it is.
    expect(lines(await load(cwd, ['tab.yaml']))[0]).toMatch(/^tab\.yaml:4:1: /);
  });
});

describe('loadConfig reading anchors and aliases', () => {
  it('refuses an alias with no anchor of its name before it, where null would be a valid value', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  acme: *nope\n  beta: *later\n  gamma: &later {}\n' });
    expect(lines(await load(cwd, []))).toEqual([
      'orgs.yaml:3:9: alias *nope has no anchor &nope before it (an alias stands for the anchor of its name written above it): define the anchor first, or fix the name',
      'orgs.yaml:4:9: alias *later has no anchor &later before it (an alias stands for the anchor of its name written above it): define the anchor first, or fix the name',
    ]);
  });

  it('refuses an alias with no anchor used as a key', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  *nope : {}\n' });
    expect(lines(await load(cwd, []))).toEqual([
      'orgs.yaml:3:3: alias *nope has no anchor &nope before it (an alias stands for the anchor of its name written above it): define the anchor first, or fix the name',
    ]);
  });

  /** A bulk file in which every organisation's billing is one anchor, used `n - 1` times. */
  function sharedBilling(n: number): string {
    const lines = ['version: 1', 'organisations:', '  org-0:', '    billing: &billing', '      billingEmail: billing@example.com', '      customerID: cus_shared'];
    for (let i = 1; i < n; i++) lines.push(`  org-${i}:`, '    billing: *billing');
    return `${lines.join('\n')}\n`;
  }

  it('reads a bulk file whose organisations share one billing anchor a thousand times: a normal file, not an alias bomb', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': sharedBilling(1_000) });
    const result = await load(cwd, []);
    expect(lines(result)).toEqual([]);
    if (!result.ok) return;
    expect(result.state.organisations).toHaveLength(1_000);
    expect(new Set(result.state.organisations.map((o) => JSON.stringify(o.billing)))).toEqual(new Set(['{"billingEmail":"billing@example.com","customerID":"cus_shared"}']));
  });

  it('takes an alias to the most recent anchor of its name before it', async () => {
    const cwd = await makeWorkspace({
      'orgs.yaml': `version: 1
organisations:
  a:
    billing: &b { customerID: first }
  b:
    billing: *b
  c:
    billing: &b { customerID: second }
  d:
    billing: *b
`,
    });
    const result = await load(cwd, []);
    expect(result.ok && result.state.organisations.map((o) => [o.slug, o.billing?.customerID])).toEqual([
      ['a', 'first'],
      ['b', 'first'],
      ['c', 'second'],
      ['d', 'second'],
    ]);
  });

  it('takes an alias to an anchor on an empty value as that empty value, not as an earlier anchor of the name', async () => {
    const cwd = await makeWorkspace({
      'orgs.yaml': 'version: 1\norganisations:\n  a:\n    invitations:\n      accept: &x [inv_1]\n  b:\n    invitations:\n      accept: &x\n  c:\n    invitations:\n      accept: *x\n',
    });
    expect(lines(await load(cwd, []))).toEqual(['orgs.yaml:8:7: invitations.accept: expected a list, got nothing (null)', 'orgs.yaml:11:15: invitations.accept: expected a list, got nothing (null)']);
  });

  it('reports what is wrong in a shared mapping once, where it is written, however many organisations use it', async () => {
    const lines_ = ['version: 1', 'organisations:', '  org-0:', '    billing: &billing', '      customerId: cus_1', '      platformID: 42'];
    for (let i = 1; i < 500; i++) lines_.push(`  org-${i}:`, '    billing: *billing');
    const cwd = await makeWorkspace({ 'orgs.yaml': `${lines_.join('\n')}\n` });
    expect(lines(await load(cwd, []))).toEqual([
      'orgs.yaml:5:7: unknown key "customerId"; did you mean "customerID"? (orgs files use the update spelling: customerID, subscriptionID, platformID)',
      'orgs.yaml:6:19: billing.platformID: unquoted 42 would be read as a number, not a string: quote it: "42"',
    ]);
  });

  it('reports a list of ids that organisations share through an alias once per alias, at the alias, naming the organisation', async () => {
    const cwd = await makeWorkspace({
      'orgs.yaml': `version: 1
organisations:
  gamma:
    invitations:
      accept: &invs [inv_1, inv_2, inv_3]
  delta:
    notificationChannels: {}
    invitations:
      accept: *invs
  epsilon: &eps
    id: org_e
  zeta: *eps
`,
    });
    expect(lines(await load(cwd, []))).toEqual([
      'orgs.yaml:9:15: invitation "inv_1" is also listed under organisation "gamma" (line 5): organisation "delta" (line 6) has it through this alias (and 2 more ids of the same list)',
      'orgs.yaml:12:9: id "org_e" is also the id of organisation "epsilon" (line 11): organisation "zeta" (line 12) has it through this alias',
    ]);
  });
});

describe('loadConfig and the characters a reviewer cannot see', () => {
  it('warns, at FILE:LINE:COL, about invisible and bidirectional control characters in values, and still loads them as written', async () => {
    const cwd = await makeWorkspace({
      'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      subscriptionID: "sub\\u200b_acme"\n      customerID: "cus_\\u202eemca"\n      platformID: ${ORGFORM_VAR_PLATFORM}\n',
    });
    const result = await load(cwd, [], { ORGFORM_VAR_PLATFORM: 'plat\u2060form' });
    expect(result.ok && result.state.organisations[0]?.billing).toEqual({ subscriptionID: 'sub\u200b_acme', customerID: 'cus_\u202eemca', platformID: 'plat\u2060form' });
    expect(result.warnings.map(formatProblem)).toEqual([
      'orgs.yaml:5:23: billing.subscriptionID "sub\\u200B_acme" holds U+200B, a zero-width character: it is sent as it is; remove it unless it is meant to be there',
      'orgs.yaml:6:19: billing.customerID "cus_\\u202Eemca" holds U+202E, a bidirectional control, which changes the order in which text is shown: it is sent as it is; remove it unless it is meant to be there',
      // The value of a variable may be a secret: named as written.
      'orgs.yaml:7:19: billing.platformID "${ORGFORM_VAR_PLATFORM}": its value holds U+2060, an invisible format character: it is sent as it is; remove it unless it is meant to be there',
    ]);
  });

  it('has no warnings for ordinary text, accents and emoji included', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': 'version: 1\norganisations:\n  café:\n    billing:\n      customerID: "cus 😀 ü"\n' });
    const result = await load(cwd, []);
    expect(result).toMatchObject({ ok: true, warnings: [] });
  });
});


describe('loadConfig on long inputs (issue 35)', () => {
  const longList = (n: number, item: (i: number) => string) => {
    const lines = ['version: 1', 'organisations:', '  acme:', '    invitations:', '      revoke:'];
    for (let i = 0; i < n; i++) lines.push(`        - ${item(i)}`);
    return `${lines.join('\n')}\n`;
  };

  it('reports every one of 150,000 problems in one file, where spreading them into push() overflowed the stack', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': longList(150_000, String) });
    const result = await load(cwd, ['orgs.yaml']);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toHaveLength(150_000);
    expect(formatProblem(problems[149_999]!)).toBe('orgs.yaml:150005:11: invitations.revoke[149999]: unquoted 149999 would be read as a number, not a string: quote it: "149999"');
  });

  it('finds an id listed twice in a long list without the schema\'s pairwise check, pointing back at the first', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': longList(2_000, (i) => `inv_${i === 1_999 ? 7 : i}`) });
    expect(lines(await load(cwd, ['orgs.yaml']))).toEqual(['orgs.yaml:2005:11: invitation "inv_7" is listed twice (first at line 13)']);
  });
});
