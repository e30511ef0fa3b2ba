import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_IDENTIFIER_LENGTH } from '../../src/api/encode-segment.js';
import { BILLING_FIELDS, type BillingField } from '../../src/model/billing.js';
import { parseSource } from '../../src/config/parse-source.js';
import { readTree } from '../../src/config/read-tree.js';
import { SchemaWalker } from '../../src/config/schema-walker.js';
import { loadSchemaValidator, type JsonSchema, type ValidateFunction } from '../../src/config/schema-validator.js';
import type { DesiredOrganisation, DesiredState } from '../../src/model/desired-state.js';

const ROOT = join(import.meta.dirname, '..', '..');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas', 'orgs.schema.json'), 'utf8')) as Record<string, any>;

// Exhaustive on the TypeScript side: adding, removing or renaming a field of these types fails to
// compile until the lists change too, and the tests below hold the lists to the schema.
const FILE_KEYS = { version: true, activeOrganisation: true, defaults: true, organisations: true } satisfies Record<
  Exclude<keyof DesiredState, 'files'> | 'defaults',
  true
>;
const ORGANISATION_KEYS = { id: true, billing: true, invitations: true, notificationChannels: true } satisfies Record<
  Exclude<keyof DesiredOrganisation, 'slug' | 'source'>,
  true
>;
const INVITATION_KEYS = { accept: true, revoke: true } satisfies Record<keyof DesiredOrganisation['invitations'], true>;
const CHANNEL_KEYS = { remove: true } satisfies Record<keyof DesiredOrganisation['notificationChannels'], true>;
const BILLING_KEYS = { billingEmail: true, customerID: true, subscriptionID: true, platformID: true } satisfies Record<BillingField, true>;

const keys = (s: Record<string, any>) => Object.keys(s.properties).sort();

describe('schemas/orgs.schema.json and the TypeScript types', () => {
  it('declare the same keys at every level', () => {
    const organisation = schema.$defs.organisation;
    expect(keys(schema)).toEqual(Object.keys(FILE_KEYS).sort());
    expect(keys(organisation)).toEqual(Object.keys(ORGANISATION_KEYS).sort());
    expect(keys(organisation.properties.invitations)).toEqual(Object.keys(INVITATION_KEYS).sort());
    expect(keys(organisation.properties.notificationChannels)).toEqual(Object.keys(CHANNEL_KEYS).sort());
    expect(keys(schema.$defs.billing)).toEqual(Object.keys(BILLING_KEYS).sort());
    expect(Object.keys(schema.$defs.billing.properties)).toEqual([...BILLING_FIELDS]);
    expect(keys(schema.properties.defaults)).toEqual(['billing']);
  });

  it('accepts only version 1, as DesiredState.version says', () => {
    expect(schema.properties.version).toMatchObject({ const: 1 });
    expect(schema.required).toEqual(['version']);
  });

  it('refuses identifiers longer than the client will send', () => {
    expect(schema.$defs.slug.maxLength).toBe(MAX_IDENTIFIER_LENGTH);
    expect(schema.$defs.identifier.maxLength).toBe(MAX_IDENTIFIER_LENGTH);
  });
});

describe('the precompiled validator (compile-schema.ts, written to dist/validators by the build)', () => {
  it('judges every corpus file exactly as the validator compiled at run time', async () => {
    const build = await import('../../src/config/compile-schema.js');
    const module = { exports: {} as ValidateFunction & { schema: JsonSchema } };
    // Evaluated here rather than written out, so that its require()s resolve from this repository.
    new Function('module', 'exports', 'require', build.emitStandalone('orgs'))(module, module.exports, createRequire(import.meta.url));
    const standalone = module.exports;
    const runtime = await loadSchemaValidator('orgs');
    expect(standalone.schema).toEqual(schema);

    const walker = new SchemaWalker(schema);
    const dirs = ['bad', 'good'].map((d) => join(import.meta.dirname, 'corpus', d));
    let compared = 0;
    for (const dir of dirs) {
      for (const name of readdirSync(dir).filter((n) => n.endsWith('.yaml'))) {
        const parsed = await parseSource(readFileSync(join(dir, name)));
        if (!parsed.ok || parsed.root === null) continue;
        const { value } = readTree(parsed.root, walker, {});
        expect(standalone(value), name).toBe(runtime.validate(value));
        expect(standalone.errors ?? null, name).toEqual(runtime.validate.errors ?? null);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(20);
  });
});

describe('the examples', () => {
  it.each(['examples/orgs.yaml', 'examples/bulk/orgs-01.yaml'])('%s names the schema for editors', (file) => {
    const first = readFileSync(join(ROOT, file), 'utf8').split('\n')[0]!;
    const match = /^# yaml-language-server: \$schema=(.+)$/.exec(first);
    expect(match).not.toBeNull();
    expect(readFileSync(join(ROOT, file, '..', match![1]!), 'utf8')).toBe(readFileSync(join(ROOT, 'schemas', 'orgs.schema.json'), 'utf8'));
  });
});
