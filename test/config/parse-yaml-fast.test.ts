import { readdirSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseYamlFast } from '../../src/config/parse-yaml-fast.js';
import { parseYaml } from '../../src/config/parse-yaml.js';

/** The yaml package's tree for `text`, which the fast parser must reproduce exactly. */
function reference(text: string) {
  const result = parseYaml(text);
  return result.ok ? result.root : { problems: result.problems };
}

const KEYS = ['a', 'b', 'acme', 'org-1', 'x.y', '$k', 'on', 'no', '0123', '1e3', '12', '~', 'null', 'True', '-a', '<<', '"q"', "'s'", '"0123"', "''", '"a b"', 'a b', 'é', '"é"', 'k\t', '?x', '&x k', '"a\\"b"'];
const SCALARS = [
  'x', 'hello world', 'a  b', '1', '0', '007', '0123', '-1', '+1', '1e3', '.5', '1.', '0x1F', '0o17', '.inf', '-.Inf', '.nan',
  'on', 'yes', 'No', '~', 'null', 'NULL', 'true', 'False', '2024-01-02', '${VAR}', '$${X}', 'a${B}c', 'billing@acme.example',
  'a:b', 'a: b', 'a #b', 'a#b', 'a,b', '(x)', 'x=y', 'x/y', '~x', '"dq"', '"d q"', "'sq'", "'it''s'", '"esc\\n"', '"a\\"b"', '""', "''",
  '[a, b]', '[]', '[ ]', '[ a ,b ]', '[a,]', '[a b]', '["q", \'r\', s]', '[1, on, "x"]', '[a, [b]]', '[${V}]', '{}', '{ }', '{a: 1}',
  '-x', '- x', '-', '@x', '`x`', '&a x', '*a', '!t x', '!!str 1', '|', '>', '%x', '?', 'é', 'x\t', 'ünï', 'a\u2028b',
];

const indent = fc.constantFrom(0, 0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 6, 8).map((n) => ' '.repeat(n));
const comment = fc.constantFrom('', '', '', ' # c', '  #c', '#c', ' # é', ' #');
const keyLine = fc
  .tuple(indent, fc.constantFrom(...KEYS), fc.constantFrom(':', ':', ':', ' :', ':x'), fc.option(fc.constantFrom(...SCALARS), { nil: undefined }), fc.constantFrom(' ', ' ', '  ', ''), comment)
  .map(([ind, key, colon, value, gap, c]) => `${ind}${key}${colon}${value === undefined ? '' : `${gap}${value}`}${c}`);
const itemLine = fc
  .tuple(indent, fc.constantFrom('- ', '-  ', '-'), fc.constantFrom(...SCALARS), comment)
  .map(([ind, dash, value, c]) => `${ind}${dash}${value}${c}`);
const otherLine = fc.constantFrom('', '   ', '# comment', '  # indented comment', '---', '...', '%YAML 1.2', '\t', 'a:\tb', '#\u0085');
const line = fc.oneof({ weight: 6, arbitrary: keyLine }, { weight: 3, arbitrary: itemLine }, { weight: 1, arbitrary: otherLine });
const document = fc
  .tuple(fc.array(line, { minLength: 0, maxLength: 14 }), fc.constantFrom('\n', '\n', '\r\n'), fc.boolean())
  .map(([lines, eol, finalEol]) => lines.join(eol) + (finalEol ? eol : ''));

/** Documents shaped like orgs files, so that many of them are in the fast parser's subset. */
const orgsLike = fc
  .array(
    fc.tuple(
      fc.constantFrom('acme', 'beta', 'org-1', 'on', '"0123"', 'acme'),
      fc.constantFrom('', '{}', '# c'),
      fc.array(fc.constantFrom('id: org_1', 'id: 0123', 'billing:', '  billingEmail: b@x.example', '  customerID: "cus 1"', 'invitations:', '  accept: [a, b]', '  revoke:', '  - r1', '  -   r2 # c', '- r3', 'notificationChannels: {}', '# note', ''), { maxLength: 6 }),
    ),
    { maxLength: 5 },
  )
  .map((orgs) => {
    const lines = ['version: 1', 'organisations:'];
    for (const [slug, after, body] of orgs) {
      lines.push(`  ${slug}:${after ? ` ${after}` : ''}`);
      for (const l of body) lines.push(l === '' ? '' : `    ${l}`);
    }
    return lines.join('\n') + '\n';
  });

describe('parseYamlFast', () => {
  it('gives exactly the tree of the yaml package for every document it accepts', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(document, orgsLike), (text) => {
        const fast = parseYamlFast(text);
        if (fast === undefined) return;
        accepted += 1;
        expect(fast).toEqual(reference(text));
      }),
      { numRuns: 4000 },
    );
    // Without this the property could pass by accepting nothing.
    expect(accepted).toBeGreaterThan(400);
  });

  // Each tricky text in each place a scalar can stand, and random texts from YAML's special characters.
  const contexts = [(s: string) => `a: ${s}\n`, (s: string) => `a:\n- ${s}\n`, (s: string) => `a: [${s}]\n`, (s: string) => `a: [x, ${s} ]\n`, (s: string) => `${s}: v\n`, (s: string) => `k:\n  ${s}: v\n`];

  /** The fast path may decline a text (the yaml package then reads it), but never read it differently. */
  const declinesOrAgrees = (text: string) => {
    const fast = parseYamlFast(text);
    return fast === undefined || isDeepStrictEqual(fast, reference(text));
  };

  it.each(SCALARS.flatMap((scalar) => contexts.map((context) => context(scalar))))('agrees with the yaml package on %j, or leaves it to it', (text) => {
    expect(declinesOrAgrees(text)).toBe(true);
  });

  it('agrees with the yaml package on texts made of YAML\'s special characters', () => {
    const text = fc.string({ unit: fc.constantFrom(...'ab :#,[]{}\'"\\-?&*!|>%@`~.0eE+xn\tü\u2028'), maxLength: 7 });
    fc.assert(
      fc.property(text, fc.constantFrom(...contexts), (s, context) => {
        const doc = context(s);
        const fast = parseYamlFast(doc);
        if (fast !== undefined) expect(fast).toEqual(reference(doc));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the common shapes of an orgs file', () => {
    const text = 'version: 1\norganisations:\n  acme:\n    id: org_acme # the id\n    invitations:\n      accept: [inv_1, "inv 2"]\n      revoke:\n      - inv_3\n  beta: {}\n  gamma:\n';
    const fast = parseYamlFast(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(reference(text));
  });

  it.each([
    ['an anchor', 'a: &x b\nc: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a block scalar', 'a: |\n  text\n'],
    ['a multi-line plain scalar', 'a: b\n  c\n'],
    ['an escape in double quotes', 'a: "x\\ty"\n'],
    ['a tab', 'a:\tb\n'],
    ['non-ASCII outside a comment', 'a: ünï\n'],
    ['a second document', 'a: b\n---\nc: d\n'],
    ['a key YAML reads as a number', '0123: x\n'],
    ['a value YAML reads as a boolean', 'a: true\n'],
  ])('leaves %s to the yaml package', (_what, text) => {
    expect(parseYamlFast(text)).toBeUndefined();
  });

  it('says a document of only comments has no content, as the yaml package does', () => {
    expect(parseYamlFast('# nothing here\n\n')).toBeNull();
    expect(reference('# nothing here\n\n')).toBeNull();
  });

  const ROOT = join(import.meta.dirname, '..', '..');
  const yamlFiles = (dir: string) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.yaml'))
      .map((name) => join(dir, name));

  it.each([...yamlFiles('examples'), ...yamlFiles('examples/bulk')])('reads %s itself, without the yaml package', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const fast = parseYamlFast(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(reference(text));
  });

  it.each([...yamlFiles('test/config/corpus/bad'), ...yamlFiles('test/config/corpus/good')])('agrees with the yaml package on %s, or leaves it to it', (file) => {
    expect(declinesOrAgrees(readFileSync(join(ROOT, file), 'utf8'))).toBe(true);
  });
});
