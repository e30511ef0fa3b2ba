/**
 * Reliability cases 17–20: hostile or broken input files — configuration, saved plans and the
 * state journal — are refused with a clear message, never a crash, and nothing is overwritten.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { makeWorkspace } from '../support/workspace.js';
import { expectNoCrash, startWorld, type World } from './support.js';

/** Nine levels of nine: 9^9 (387 million) nodes if expanded. */
function aliasBomb(style: 'sequence' | 'mapping'): string {
  const lines = ['version: 1', 'anchors:'];
  const keys = 'abcdefghi';
  const wrap = (items: string[]) => (style === 'sequence' ? `[${items.join(', ')}]` : `{${items.map((v, i) => `k${i}: ${v}`).join(', ')}}`);
  lines.push(`  a: &a ${wrap(Array.from({ length: 9 }, () => '"lol"'))}`);
  for (let level = 1; level < keys.length; level += 1) {
    lines.push(`  ${keys[level]}: &${keys[level]} ${wrap(Array.from({ length: 9 }, () => `*${keys[level - 1]}`))}`);
  }
  lines.push('organisations:', '  acme:', '    invitations:', `      revoke: *i`);
  return lines.join('\n') + '\n';
}

const PLAN_CONFIG = `version: 1
organisations:
  acme:
    billing:
      billingEmail: finance@acme.example
    invitations:
      revoke: [inv_acme_carol]
`;

describe('bad input', () => {
  it.each(['sequence', 'mapping'] as const)('case 17: a 9-level YAML alias bomb (%s) is rejected in under 1 s and 100 MB', async (style) => {
    const cwd = await makeWorkspace({ 'orgs.yaml': aliasBomb(style) });
    // Warm the loader's lazy imports (the yaml package, the schema), so that only the bomb is timed.
    await loadConfig(['orgs.yaml'], { cwd, variables: {} });
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const started = performance.now();
    const result = await loadConfig(['orgs.yaml'], { cwd, variables: {} });
    const elapsed = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.some((p) => /alias/i.test(p.message))).toBe(true);
    expect(result.problems.every((p) => p.file === 'orgs.yaml' && p.line >= 1 && p.col >= 1)).toBe(true);
    expect(elapsed).toBeLessThan(1_000);
    expect(peak - rssBefore).toBeLessThan(100 * 1024 * 1024);
  });

  const BAD_FILES: Array<[string, string | Buffer, RegExp]> = [
    ['duplicate keys', 'version: 1\norganisations:\n  acme: {}\n  acme: {}\n', /^orgs\.yaml:4:3: duplicate key "acme" \(first at line 3\)$/m],
    ['an unknown key', 'version: 1\norganisations:\n  acme:\n    bilings: {}\n', /^orgs\.yaml:4:5: unknown key "bilings"; did you mean "billing"\?$/m],
    ['an unquoted numeric identifier', 'version: 1\norganisations:\n  acme:\n    id: 0123\n', /^orgs\.yaml:4:9: id: unquoted 0123 would be read as a number, not a string: quote it: "0123"$/m],
    ['an unquoted boolean identifier', 'version: 1\norganisations:\n  acme:\n    invitations:\n      revoke: [on]\n', /^orgs\.yaml:5:16: invitations\.revoke\[0\]: unquoted on would be read as a boolean/m],
    ['an unquoted date identifier', 'version: 1\norganisations:\n  2024-01-02: {}\n', /^orgs\.yaml:3:3: organisation slug: unquoted 2024-01-02 would be read as a date/m],
    ['a file over the size cap', Buffer.from(`version: 1\n# ${'x'.repeat(4 * 1024 * 1024)}\n`), /^orgs\.yaml:1:1: file is 4\.0 MiB, over the 4 MiB limit/m],
    ['invalid UTF-8', Buffer.concat([Buffer.from('version: 1\norganisations:\n  acme: {}\n  '), Buffer.from([0xc3, 0x28]), Buffer.from(': {}\n')]), /^orgs\.yaml:4:3: not valid UTF-8/m],
    ['a binary file', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0xff, 0xfe]), /^orgs\.yaml:1:\d+: binary file/m],
    ['an empty file', '', /^orgs\.yaml:1:1: the file declares nothing/m],
    ['UTF-16 text', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('version: 1\n', 'utf16le')]), /^orgs\.yaml:1:1: file is UTF-16 text/m],
    ['a tab-indented file', 'version: 1\norganisations:\n\tacme: {}\n', /^orgs\.yaml:3:\d+: /m],
    ['an unclosed flow list', 'version: 1\norganisations:\n  acme:\n    invitations:\n      revoke: [a, b\n', /^orgs\.yaml:\d+:\d+: /m],
  ];

  it.each(BAD_FILES)('case 18: %s is a FILE:LINE:COL error, never a crash, and nothing is read from the service', async (_what, content, expected) => {
    const world = await startWorld();
    await writeFile(join(world.cwd, 'orgs.yaml'), content);
    const validate = await world.cli(['validate']);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toBe('');
    expect(validate.stderr).toMatch(expected);
    expect(validate.stderr).toMatch(/^\d+ problems? in 1 file\.\n$/m);
    expectNoCrash(validate.stderr);
    for (const command of [['plan'], ['apply', '--auto-approve']]) {
      const result = await world.cli(command);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^Error: The configuration has \d+ problems? in 1 file; nothing was read from the service\.$/m);
      expect(result.stderr.replace(/^ {2}/gm, '')).toMatch(expected);
      expectNoCrash(result.stderr);
    }
    expect(world.emulator.counters.total).toBe(0);
    world.leaks.expectClean();
  });

  async function savedPlan(world: World): Promise<string> {
    const plan = await world.cli(['plan', '--out', 'plan.json']);
    expect(plan.code).toBe(0);
    return readFile(join(world.cwd, 'plan.json'), 'utf8');
  }

  it('case 19: a saved plan edited by hand, truncated, of another format version, or not a plan at all is refused with a clear message', async () => {
    const world = await startWorld({ config: PLAN_CONFIG });
    const text = await savedPlan(world);
    // Each variant must differ from the plan as written (a record a line): an edit that missed would apply it.
    expect(text.startsWith('{"orgformSavedPlan":4,"record":"header",')).toBe(true);
    const v3 = `${JSON.stringify({ orgformSavedPlan: 3, createdAt: '2026-01-01T00:00:00.000Z', plan: {}, checksum: '0'.repeat(64) })}\n`;
    const variants: Array<[string, string, RegExp]> = [
      ['edited.json', text.replace('finance@acme.example', 'attacker@evil.example'), /The saved plan edited\.json was changed after it was written \(its checksum does not match\)\. Make a new one/],
      ['reordered.json', text.replace('{"orgformSavedPlan":4,"record":"header",', '{"record":"header","orgformSavedPlan":4,'), /The saved plan reordered\.json was changed after it was written/],
      ['truncated.json', text.slice(0, Math.floor(text.length * 0.6)), /The saved plan truncated\.json ends (in the middle of line \d+|at line \d+ without its trailer line) \(it was cut short/],
      ['empty.json', '', /The saved plan empty\.json is not an orgform plan file/],
      ['future.json', text.replace('"orgformSavedPlan":4', '"orgformSavedPlan":5'), /The saved plan future\.json has format version 5; this orgform reads version 4/],
      ['v3.json', v3, /The saved plan v3\.json has format version 3, one JSON document, written by an earlier orgform; this orgform reads version 4, a record a line\. Make a new one with orgform plan --out v3\.json/],
      ['trailing.json', `${text}{"record":"trailer","checksum":"${'0'.repeat(64)}"}\n`, /The saved plan trailing\.json:\d+ follows the trailer line, which must be the last/],
      ['other.json', JSON.stringify({ version: 1, services: {} }), /The saved plan other\.json is not an orgform plan file/],
      ['missing.json', '', /Cannot read the plan file absent\.json: ENOENT/],
    ];
    for (const [file, content, expected] of variants) {
      if (file !== 'missing.json') await writeFile(join(world.cwd, file), content);
      const result = await world.cli(['apply', file === 'missing.json' ? 'absent.json' : file]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(expected);
      expectNoCrash(result.stderr);
    }
    expect(world.emulator.counters.writes).toBe(0);
    expect(existsSync(join(world.cwd, '.orgform', 'state.json'))).toBe(false);
    world.leaks.expectClean();
  });

  it('case 19: a saved plan made for another base URL is refused, and neither service is written to', async () => {
    const world = await startWorld({ config: PLAN_CONFIG });
    await savedPlan(world);
    const other = await startWorld();
    const result = await world.cli(['apply', 'plan.json'], { env: { ORGFORM_BASE_URL: other.emulator.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The saved plan plan.json was made for ${world.emulator.url}, not ${other.emulator.url}. Nothing was changed.`);
    expect(other.emulator.counters.total).toBe(0);
    expect(world.emulator.counters.writes).toBe(0);
    // The same service under another spelling of its URL is still the same service.
    const port = new URL(world.emulator.url).port;
    const again = await world.cli(['apply', 'plan.json'], { env: { ORGFORM_BASE_URL: `http://127.0.0.1:${port}/` } });
    expect(again.code).toBe(0);
    world.leaks.expectClean();
  });

  const JOURNALS: Array<[string, string, RegExp]> = [
    ['not JSON', '{"version": 1, "services": {', /is not valid JSON \(corrupt or truncated\)/],
    ['empty', '', /is not valid JSON \(corrupt or truncated\)/],
    ['a list', '[]', /is not a JSON object/],
    ['of a future version', JSON.stringify({ version: 2, services: {}, newThing: true }, null, 2), /has version 2; this orgform reads version 1 \(a newer orgform may have written it\)/],
    ['without a version', JSON.stringify({ services: {} }), /has no version; this orgform reads version 1/],
    ['with malformed entries', JSON.stringify({ version: 1, services: { 'http://x': [] } }), /has a malformed entry list/],
  ];

  it.each(JOURNALS)('case 20: a journal that is %s is refused by plan and apply, and never overwritten', async (_what, content, expected) => {
    const world = await startWorld({ config: PLAN_CONFIG });
    await mkdir(join(world.cwd, '.orgform'));
    await writeFile(world.journalPath, content);
    for (const command of [['plan'], ['apply', '--auto-approve']]) {
      const result = await world.cli(command);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(expected);
      expect(result.stderr).toContain('orgform will not overwrite it');
      expectNoCrash(result.stderr);
    }
    expect(await readFile(world.journalPath, 'utf8')).toBe(content);
    expect(world.emulator.counters.writes).toBe(0);
    // The refused apply let go of its lock.
    expect(existsSync(`${world.journalPath}.lock`)).toBe(false);
    world.leaks.expectClean();
  });
});
