/**
 * A stand-in for orgform's GitHub releases, for the pipelines that fetch a release (the GitHub
 * Action, the GitLab component) without the network: on 127.0.0.1, `/vVERSION/orgform-VERSION.tgz`
 * and `/vVERSION/SHA256SUMS` as the release workflow publishes them. The tarball has a release's
 * shape (package/bin/orgform.js, package/pipeline/) but its bin runs this repository's built CLI, so
 * that the pipelines' tests do not pack and bundle; test/release/ tests the real tarball. It
 * records each request, and can serve a tarball other than the one SHA256SUMS names.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runProcess } from './run-process.js';
import { CLI_BIN } from './run-cli.js';
import { makeWorkspace } from './workspace.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface FakeRelease {
  /** What the pipelines take as the releases' base (ORGFORM_RELEASES_URL, the component's releases-url). */
  url: string;
  version: string;
  /** The tarball's SHA-256, as SHA256SUMS lists it. */
  sha256: string;
  /** The tarball as a file, for `version: PATH`. */
  tarballPath: string;
  /** `GET /path` of every request, in order. */
  requests: string[];
  /** Serve other bytes as the tarball from now on (SHA256SUMS unchanged). */
  tamper(): void;
  close(): Promise<void>;
}

async function makeTarball(version: string): Promise<string> {
  const dir = await makeWorkspace();
  const pkg = join(dir, 'package');
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'orgform', version, type: 'module' }));
  writeFileSync(join(pkg, 'bin', 'orgform.js'), `#!/usr/bin/env node\nimport ${JSON.stringify(pathToFileURL(CLI_BIN).href)};\n`, { mode: 0o755 });
  cpSync(join(ROOT, 'pipeline'), join(pkg, 'pipeline'), { recursive: true });
  const tarball = join(dir, `orgform-${version}.tgz`);
  const tar = await runProcess('tar', ['-czf', tarball, 'package'], dir, { PATH: process.env.PATH ?? '' });
  if (tar.code !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return tarball;
}

export async function startFakeRelease(version: string): Promise<FakeRelease> {
  const tarballPath = await makeTarball(version);
  const tarball = readFileSync(tarballPath);
  const sha256 = createHash('sha256').update(tarball).digest('hex');
  const sums = `${sha256}  orgform-${version}.tgz\n`;
  let served = tarball;
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === `/v${version}/orgform-${version}.tgz`) return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(served);
    if (req.url === `/v${version}/SHA256SUMS`) return res.writeHead(200, { 'content-type': 'text/plain' }).end(sums);
    return res.writeHead(404).end('Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    version,
    sha256,
    tarballPath,
    requests,
    tamper: () => {
      served = Buffer.concat([tarball, Buffer.from('tampered')]);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
