import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/commands/emulator.js';
import { generateEmulatorData } from '../../src/emulator/generate-emulator-data.js';
import { OrgformError } from '../../src/errors.js';
import { createIO } from '../support/create-io.js';
import { waitUntil } from './emulator-test-kit.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orgform-emulator-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const listeningUrl = (out: string) => /Organisations emulator listening on (http:\/\/\S+)/.exec(out)?.[1];

describe('orgform emulator', () => {
  it('listens, names the demo tokens, serves until aborted, saves the state and returns 0', async () => {
    const cli = createIO({ cwd: dir });
    const exit = run({ port: 0, host: '127.0.0.1', latency: 0, slugDelay: 0, save: 'saved.json' }, cli.io, []);
    await waitUntil(() => listeningUrl(cli.out()) !== undefined);
    const url = listeningUrl(cli.out())!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.out()).toContain('demo-token (ada@acme.example)');
    expect(cli.out()).toContain('other-token (bob@globex.example)');

    const response = await fetch(`${url}/api/organisations/v1/organisations/org_acme/active`, { method: 'PUT', headers: { authorization: 'Bearer demo-token' } });
    expect(response.status).toBe(200);
    cli.stop();
    expect(await exit).toBe(0);

    const saved = JSON.parse(await readFile(join(dir, 'saved.json'), 'utf8'));
    expect(saved.users[0]).toMatchObject({ token: 'demo-token', active: 'org_acme' });
    await expect(fetch(`${url}/__emulator/counters`)).rejects.toThrow();
    expect(cli.err()).toBe('');
  });

  it('serves the --data file, relative to the working directory', async () => {
    await writeFile(join(dir, 'seed.json'), JSON.stringify(generateEmulatorData({ organisations: 3, token: 'bench-token' })));
    const cli = createIO({ cwd: dir });
    const exit = run({ port: 0, data: 'seed.json', slugDelay: 0 }, cli.io, []);
    await waitUntil(() => listeningUrl(cli.out()) !== undefined);
    const response = await fetch(`${listeningUrl(cli.out())}/api/organisations/v1/organisations`, { headers: { authorization: 'Bearer bench-token' } });
    expect(((await response.json()) as { totalCount: number }).totalCount).toBe(3);
    expect(cli.out()).toContain('Demo token: bench-token');
    cli.stop();
    expect(await exit).toBe(0);
  });

  it('fails with CONFIG_IO naming a --data file that does not exist', async () => {
    const cli = createIO({ cwd: dir });
    const failure = run({ port: 0, data: 'missing.json' }, cli.io, []);
    await expect(failure).rejects.toBeInstanceOf(OrgformError);
    await expect(failure).rejects.toMatchObject({ code: 'CONFIG_IO', message: expect.stringContaining(join(dir, 'missing.json')) });
  });

  it('fails with CONFIG_INVALID on a --data file that is not seed data', async () => {
    await writeFile(join(dir, 'bad.json'), '{"users": 3}');
    const cli = createIO({ cwd: dir });
    await expect(run({ port: 0, data: 'bad.json' }, cli.io, [])).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('bad.json') });
  });

  it('fails with a usage error when the port is taken', async () => {
    const first = createIO({ cwd: dir });
    const running = run({ port: 0 }, first.io, []);
    await waitUntil(() => listeningUrl(first.out()) !== undefined);
    const port = Number(new URL(listeningUrl(first.out())!).port);
    const second = createIO({ cwd: dir });
    await expect(run({ port }, second.io, [])).rejects.toMatchObject({ code: 'USAGE', message: expect.stringContaining(String(port)) });
    first.stop();
    expect(await running).toBe(0);
  });
});
