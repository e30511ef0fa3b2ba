#!/usr/bin/env node
// Writes a deterministic set of orgs files for trying orgform at scale, and the emulator data that
// matches them (so that `plan -f DIR` finds every organisation). Run with --help for the usage.
// Same arguments, same bytes: the files are committed, and a diff after regenerating means the script changed.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const USAGE = `Usage: node examples/generate-bulk.mjs [--count N] [--files K] [--out DIR]

Writes N organisations (default 300) into K files (default 3), DIR/orgs-01.yaml …, and
DIR/emulator-data.json: the emulator's data that matches them (the token demo-token is a member
of every organisation except those with an invitation to accept; the invitations and channels
named exist; a seventh of the billing e-mails and every platformID differ, so there is something
to plan). DIR defaults to examples/bulk; orgs-NN.yaml files already there are replaced.

Examples:
  node examples/generate-bulk.mjs                                          # examples/bulk, as committed
  node examples/generate-bulk.mjs --count 10000 --files 1 --out /tmp/bulk  # one file of 10,000
  npx orgform emulator --data /tmp/bulk/emulator-data.json                 # then, in another terminal:
  ORGFORM_BASE_URL=http://127.0.0.1:4010 ORGFORM_TOKEN=demo-token npx orgform plan -f /tmp/bulk

Options:
  --count N   organisations to write, a whole number from 1 to 1000000 (default 300)
  --files K   files to spread them over, a whole number from 1 to 1000 (default 3)
  --out DIR   the directory to write into (default examples/bulk)
  -h, --help  show this help
`;

const here = dirname(fileURLToPath(import.meta.url));

/** Exits 2 with the reason and a pointer to --help, as command-line tools do for a usage error. */
function usageError(message) {
  process.stderr.write(`generate-bulk: ${message}\nRun node examples/generate-bulk.mjs --help for the usage.\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      count: { type: 'string', default: '300' },
      files: { type: 'string', default: '3' },
      out: { type: 'string', default: join(here, 'bulk') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (err) {
  usageError(err.message.replace(/\. To specify a positional argument.*$/s, ''));
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

function wholeNumber(name, value, max) {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) usageError(`--${name} must be a whole number from 1 to ${max} (got "${value}")`);
  return n;
}
const count = wholeNumber('count', values.count, 1_000_000);
const fileCount = wholeNumber('files', values.files, 1000);
if (values.out === '') usageError('--out must name a directory (got "")');

// mulberry32: a tiny seeded generator, so that every run writes the same files.
let seed = 20240102;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const WORDS = ['acme', 'apex', 'blue', 'cedar', 'delta', 'ember', 'fjord', 'grove', 'harbor', 'iris', 'juniper', 'kite', 'lumen', 'maple', 'nova', 'onyx', 'pine', 'quartz', 'river', 'summit'];
const pick = (list) => list[Math.floor(random() * list.length)];
const width = String(count).length;
// The emulator's user that the examples' token (demo-token) stands for.
const USER = { token: 'demo-token', email: 'ada@acme.example' };

/** One organisation as declared. The calls to random() are in the order the committed files were made with. */
function organisation(n) {
  const number = String(n).padStart(width, '0');
  const slug = `${pick(WORDS)}-${pick(WORDS)}-${number}`;
  const billing = {};
  if (random() < 0.8) billing.billingEmail = `billing+${number}@${slug}.example`;
  if (random() < 0.5) billing.customerID = `cus_${number}`;
  if (random() < 0.3) billing.subscriptionID = `sub_${number}`;
  const accept = random() < 0.1 ? [`inv_${number}_a`] : [];
  const revoke = random() < 0.2 ? [`inv_${number}_r1`, ...(random() < 0.5 ? [`inv_${number}_r2`] : [])] : [];
  const remove = random() < 0.15 ? [`chn_${number}`] : [];
  return { n, number, slug, id: `org_${number}`, billing, accept, revoke, remove };
}

function yamlLines(o) {
  const lines = [`  ${o.slug}:`, `    id: ${o.id}`];
  const billing = Object.entries(o.billing);
  if (billing.length > 0) lines.push('    billing:', ...billing.map(([key, value]) => `      ${key}: ${value}`));
  if (o.accept.length + o.revoke.length > 0) {
    lines.push('    invitations:');
    if (o.accept.length > 0) lines.push(`      accept: [${o.accept.join(', ')}]`);
    if (o.revoke.length > 0) lines.push(`      revoke: [${o.revoke.join(', ')}]`);
  }
  if (o.remove.length > 0) lines.push('    notificationChannels:', `      remove: [${o.remove.join(', ')}]`);
  return lines;
}

/**
 * The service as it stands before the first apply: every declared organisation exists, and every
 * invitation and channel the files name, so that plan has no "not found". What differs from the
 * files is what the first plan shows: the platformID that `defaults` sets, every seventh billing
 * e-mail, and the invitations and channels still to accept or delete.
 */
function serviceOrganisation(o) {
  const billing = {
    billingEmail: o.n % 7 === 0 ? `accounts+${o.number}@${o.slug}.example` : (o.billing.billingEmail ?? `finance@${o.slug}.example`),
    customerId: o.billing.customerID ?? `cus_${o.number}`,
    subscriptionId: o.billing.subscriptionID ?? `sub_${o.number}`,
    platformId: 'plat_legacy',
  };
  return { id: o.id, slug: o.slug, displayName: o.slug.split('-').slice(0, 2).map((w) => w[0].toUpperCase() + w.slice(1)).join(' ') + ` ${o.number}`, owner: `owner+${o.number}@${o.slug}.example`, billing };
}

mkdirSync(values.out, { recursive: true });
for (const name of readdirSync(values.out)) {
  if (/^orgs-\d+\.yaml$/.test(name)) rmSync(join(values.out, name));
}
const schema = relative(values.out, join(here, '..', 'schemas', 'orgs.schema.json')).split('\\').join('/');
const perFile = Math.ceil(count / fileCount);
const data = { users: [{ ...USER, memberships: [] }], organisations: [], invitations: [], channels: [] };
for (let f = 0; f < fileCount; f++) {
  const first = f * perFile + 1;
  const last = Math.min(count, first + perFile - 1);
  if (first > last) break;
  const lines = [];
  for (let n = first; n <= last; n++) {
    const o = organisation(n);
    lines.push(...yamlLines(o));
    data.organisations.push(serviceOrganisation(o));
    if (o.accept.length === 0) data.users[0].memberships.push(o.id);
    for (const id of o.accept) data.invitations.push({ id, organisationId: o.id, email: USER.email });
    for (const id of o.revoke) data.invitations.push({ id, organisationId: o.id, email: `guest+${id}@example.com` });
    for (const id of o.remove) data.channels.push({ id, organisationId: o.id });
  }
  const text = [
    `# yaml-language-server: $schema=${schema}`,
    `# Generated by examples/generate-bulk.mjs (organisations ${first} to ${last} of ${count}); regenerate rather than edit.`,
    'version: 1',
    'defaults:',
    '  billing:',
    `    platformID: plat_bulk_${f + 1}`,
    'organisations:',
    ...lines,
    '',
  ].join('\n');
  writeFileSync(join(values.out, `orgs-${String(f + 1).padStart(2, '0')}.yaml`), text);
}
data.users[0].active = data.users[0].memberships[0];
writeFileSync(join(values.out, 'emulator-data.json'), `${JSON.stringify(data, null, 1)}\n`);
