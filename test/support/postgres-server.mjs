// A real PostgreSQL server on loopback, for the tests (vitest's globalSetup) and the bench: a fresh
// cluster in a temporary directory, on a free port, stopped and removed afterwards. The binaries
// come from Debian's `postgresql` package (/usr/lib/postgresql/VERSION/bin; .ci/run installs it),
// or ORGFORM_TEST_PG_BIN. initdb and postgres refuse to run as root, so as root they run as the
// `postgres` user (runuser), in a directory it owns, with its socket there too.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';

export function findPostgresBin() {
  const fromEnv = process.env.ORGFORM_TEST_PG_BIN;
  if (fromEnv) return fromEnv;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(base, versions[0], 'bin');
  }
  const found = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (found.status === 0 && existsSync(join(found.stdout.trim(), 'initdb'))) return found.stdout.trim();
  throw new Error(
    "no PostgreSQL server binaries: install Debian's postgresql package (apt-get install -y postgresql; .ci/run does) or set ORGFORM_TEST_PG_BIN to the directory holding initdb and pg_ctl",
  );
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a server; resolves to its admin URL and a stop function. Throws, saying why, when it cannot. */
export async function startPostgres() {
  const bin = findPostgresBin();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(os.tmpdir(), 'orgform-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (tool, args) => {
    const command = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    const result = spawnSync(command[0], command[1], { encoding: 'utf8', timeout: 120_000 });
    if (result.status !== 0) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new Error(`${tool} failed (${result.status ?? result.signal}): ${(result.stderr || result.stdout || String(result.error ?? '')).trim()}\n${log}`);
    }
  };
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const port = await freePort();
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    run('pg_ctl', ['-D', data, '-o', options, '-l', logFile, '-w', '-t', '60', 'start']);
    let stopped = false;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      bin,
      stop() {
        if (stopped) return;
        stopped = true;
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
