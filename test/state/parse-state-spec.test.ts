import { describe, expect, it } from 'vitest';
import { parseStateSpec } from '../../src/state/parse-state-spec.js';
import { rejection } from '../support/rejection.js';

const parse = (raw: string) => parseStateSpec(raw, '/repo');

describe('parseStateSpec', () => {
  it('reads a path, relative or absolute, or a file:// URL, as the journal file', () => {
    expect(parse('ci/state.json')).toEqual({ kind: 'file', path: '/repo/ci/state.json', location: '/repo/ci/state.json' });
    expect(parse('/srv/state.json')).toMatchObject({ kind: 'file', path: '/srv/state.json' });
    expect(parse('file:///srv/state.json')).toMatchObject({ kind: 'file', path: '/srv/state.json' });
  });

  it('reads a postgres URL: the state name and schema from the query (default "default" and "orgform"), removed before connecting', () => {
    expect(parse('postgresql://ada@db.example/ops')).toEqual({
      kind: 'postgres',
      connectionString: 'postgresql://ada@db.example/ops',
      name: 'default',
      schema: 'orgform',
      location: 'postgresql://[REDACTED]@db.example/ops?state=default',
    });
    expect(parse('postgres://ada:pw@db.example:6432/ops?sslmode=verify-full&state=shard-1&schema=team_a')).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://ada:pw@db.example:6432/ops?sslmode=verify-full',
      name: 'shard-1',
      schema: 'team_a',
      location: 'postgres://[REDACTED]@db.example:6432/ops?sslmode=verify-full&state=shard-1&schema=team_a',
    });
  });

  it('says outright that require, prefer and verify-ca are verified in full (as pg 8 does anyway), unless libpq’s meaning is asked for', () => {
    expect(parse('postgres://db.example/ops?sslmode=require')).toMatchObject({ connectionString: 'postgres://db.example/ops?sslmode=verify-full' });
    expect(parse('postgres://db.example/ops?sslmode=require&uselibpqcompat=true')).toMatchObject({ connectionString: 'postgres://db.example/ops?sslmode=require&uselibpqcompat=true' });
    expect(parse('postgres://db.example/ops?sslmode=no-verify')).toMatchObject({ connectionString: 'postgres://db.example/ops?sslmode=no-verify' });
  });

  it('refuses a schema that is not a plain lower-case SQL name, and an empty state name', async () => {
    expect(() => parse('postgres://db/ops?schema=Bad-Name')).toThrow(/schema=Bad-Name must be a lower-case SQL name/);
    expect(() => parse('postgres://db/ops?state=')).toThrow(/state name \(state=…\) must be 1 to 200 printable characters/);
  });

  it('reads an https address as a Terraform HTTP backend, and refuses credentials in it or plain http beyond loopback', () => {
    expect(parse('https://gitlab.example/api/v4/projects/42/terraform/state/orgform')).toMatchObject({ kind: 'http', location: 'https://gitlab.example/api/v4/projects/42/terraform/state/orgform' });
    expect(parse('http://127.0.0.1:8080/state')).toMatchObject({ kind: 'http' });
    expect(() => parse('https://u:secret@gitlab.example/state')).toThrow(/must not carry a user name or password.*ORGFORM_STATE_USERNAME/);
    expect(() => parse('https://u:secret@gitlab.example/state')).not.toThrow(/secret/);
    expect(() => parse('http://gitlab.example/state')).toThrow(/refusing plain http:\/\/ to gitlab.example/);
    // GitLab takes a token in the query too: kept for the requests, never shown.
    const withToken = parse('https://gitlab.example/api/v4/projects/42/terraform/state/orgform?private_token=glpat-Secret');
    expect(withToken).toMatchObject({ location: 'https://gitlab.example/api/v4/projects/42/terraform/state/orgform?private_token=[REDACTED]' });
    expect(withToken.kind === 'http' && withToken.address.searchParams.get('private_token')).toBe('glpat-Secret');
    expect(() => parse('http://gitlab.example/state?private_token=glpat-Secret')).not.toThrow(/Secret/);
    // A signed address (Azure's sig, S3's X-Amz-Signature): every value but the harmless ones hidden, whatever its name.
    expect(parse('https://acct.blob.example/state?sv=2024&sig=S3cret&X-Amz-Signature=S3cret2&code=S3cret3')).toMatchObject({
      location: 'https://acct.blob.example/state?sv=[REDACTED]&sig=[REDACTED]&X-Amz-Signature=[REDACTED]&code=[REDACTED]',
    });
  });

  it('refuses a postgres or http URL holding a "#" without showing any of it: a password with an unescaped "#" splits there', () => {
    expect(() => parse('postgres://ada:12#Secret@db.example/ops')).toThrow('the URL holds a "#". If it is part of the password, write it as %23');
    expect(() => parse('postgres://ada:12#Secret@db.example/ops')).not.toThrow(/Secret|12/);
    expect(() => parse('https://ada:12#Secret@gitlab.example/state')).toThrow(/must not hold a "#"/);
    expect(() => parse('https://ada:12#Secret@gitlab.example/state')).not.toThrow(/Secret|12/);
    expect(parse('postgres://ada:12%23Secret@db.example/ops')).toMatchObject({ location: 'postgres://[REDACTED]@db.example/ops?state=default' });
  });

  it('names the kinds it knows when given another scheme, without the password', async () => {
    expect(() => parse('s3://user:secret@bucket/state')).toThrow('orgform keeps state in a file, in PostgreSQL (postgres://…) or in a Terraform HTTP backend (https://…), not s3://.');
    expect(() => parse('s3://user:secret@bucket/state')).toThrow('--state s3://[REDACTED]@bucket/state: orgform keeps state');
    expect((await rejection(Promise.reject(new Error('x')).catch(() => parse(''))))!.code).toBe('USAGE');
  });
});
