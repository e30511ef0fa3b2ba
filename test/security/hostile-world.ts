/**
 * A plan job on a hostile pull request, as the suite plays it: a repository whose files the pull
 * request wrote (links included), the job's credentials in the environment as canaries, secrets in
 * files outside the repository and in its `.git/config` (the checkout's credentials), the emulator
 * behind a loopback relay that records every byte orgform sends it, and GitHub's and GitLab's
 * files. `expectNoCanary` then looks for every canary, as it is and encoded, in everything that
 * leaves the job: stdout, stderr, the annotations as the runner reads them, the step summary,
 * GITHUB_OUTPUT, the reports, every file orgform wrote in the repository (saved plans, the journal),
 * the files outside it, and the requests (the token only in its own Authorization header).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { afterEachTest } from '../support/after-each-test.js';
import { runnerAnnotations } from '../support/github-runner.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { startTerraformBackend, type TerraformBackend } from '../support/terraform-http-backend.mjs';
import { makeWorkspace } from '../support/workspace.js';

/** The job's credentials: what a plan job on a pull request holds in GitHub or GitLab. */
export const CREDENTIALS = ['ORGFORM_TOKEN', 'ORGFORM_PLAN_KEY', 'ORGFORM_STATE_PASSWORD', 'GITHUB_TOKEN', 'CI_JOB_TOKEN', 'GITLAB_API_TOKEN', 'ACTIONS_RUNTIME_TOKEN'] as const;

/** The names a pull request may try: every credential, and a state address holding a password. */
export const STOLEN_NAMES = [...CREDENTIALS, 'ORGFORM_STATE'] as const;

function canary(name: string): string {
  // Letters, digits and dashes: the same whatever escaping (JSON, %, Markdown) it goes through.
  return `canary-${name.toLowerCase().replaceAll('_', '-')}-${randomBytes(8).toString('hex')}`;
}

/** Every form a canary may take on its way out. */
function forms(secret: string): string[] {
  return [secret, Buffer.from(secret).toString('base64').replace(/=+$/, ''), Buffer.from(secret).toString('hex')];
}

interface Relay {
  url: string;
  sent(): string;
  close(): Promise<void>;
}

/** A TCP relay in front of `target` that keeps every byte a client sends through it. */
async function startRelay(target: URL): Promise<Relay> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => chunks.push(chunk));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    sent: () => Buffer.concat(chunks).toString('latin1'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const running: Array<() => Promise<void>> = [];
afterEachTest(async () => {
  await Promise.all(running.splice(0).map((stop) => stop()));
});

export interface HostileWorld {
  /** The repository's working tree (with `.git/config`), the job's working directory. */
  repo: string;
  /** Outside the repository: the runner's home and temp, with secrets in them. */
  outside: string;
  /** A file outside whose text is valid orgs.yaml declaring a canary, and one that is not YAML. */
  outsideYaml: string;
  outsideSecret: string;
  canaries: Record<string, string>;
  /** The job's environment: the canaries, the service, and the CI's own files. */
  env: Record<string, string>;
  emulator: Emulator;
  /** The Terraform HTTP backend the state is kept in (with `state: 'http'`). */
  backend: TerraformBackend | undefined;
  /** GitHub's files, under `outside`. */
  stepSummary: string;
  githubOutput: string;
  /** In-process orgform in the repository (or `cwd`) with the job's environment (and `env` on top); every output kept for the scan. */
  run(args: string[], env?: Record<string, string | undefined>, cwd?: string): Promise<CliResult>;
  /** Adds a secret of the test's own (a file's text, a service's) to look for. */
  watch(name: string, secret: string): void;
  /** Adds text that left the job another way. */
  collect(where: string, text: string): void;
  /** Fails naming every place a canary was found; returns how many texts were looked at. */
  expectNoCanary(): Promise<number>;
}

export interface HostileWorldOptions {
  /** The repository's files, as the pull request wrote them. */
  files?: Record<string, string>;
  /** Where the journal is: a Terraform HTTP backend whose address holds a signature (the default), or the file beside orgs.yaml. */
  state?: 'http' | 'file';
  /** More environment for the job (GitLab's, a state address...). */
  env?: Record<string, string>;
}

/** A plan job, in GitHub Actions (annotations, job summary) and with GitLab's project directory set too. */
export async function startHostileWorld(options: HostileWorldOptions = {}): Promise<HostileWorld> {
  const canaries: Record<string, string> = {};
  for (const name of CREDENTIALS) canaries[name] = canary(name);
  canaries.STATE_DB_PASSWORD = canary('state-db-password');
  canaries.GIT_EXTRAHEADER = canary('git-extraheader');
  canaries.RUNNER_FILE = canary('runner-file');
  canaries.OUTSIDE_YAML = canary('outside-yaml');
  canaries.ORGFORM_STATE = canary('state-signature');

  const base = await makeWorkspace({});
  const repo = join(base, 'repo');
  const outside = join(base, 'runner');
  const outsideYaml = join(outside, 'home', 'team.yaml');
  const outsideSecret = join(outside, 'home', '.git-credentials');
  const basic = Buffer.from(`x-access-token:${canaries.GIT_EXTRAHEADER}`).toString('base64');
  const planted: Record<string, string> = {
    [join(repo, '.git', 'config')]: `[core]\n\trepositoryformatversion = 0\n[http "https://github.example/"]\n\textraheader = AUTHORIZATION: basic ${basic}\n`,
    [outsideSecret]: `https://x-access-token:${canaries.RUNNER_FILE}@github.example\n`,
    [outsideYaml]: `version: 1\norganisations:\n  acme:\n    billing:\n      customerID: ${canaries.OUTSIDE_YAML}\n`,
    [join(outside, 'temp', 'step-summary.md')]: '',
    [join(outside, 'temp', 'github-output')]: '',
  };
  for (const [path, text] of Object.entries({ ...planted, ...Object.fromEntries(Object.entries(options.files ?? {}).map(([name, text]) => [join(repo, name), text])) })) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }

  const emulator = await startEmulator({ slugDelayMs: 0 });
  const relay = await startRelay(new URL(emulator.url));
  running.push(() => relay.close(), () => emulator.stop());
  const backend = options.state === 'file' ? undefined : await startTerraformBackend({ users: { 'gitlab-ci-token': canaries.ORGFORM_STATE_PASSWORD! } });
  if (backend !== undefined) running.push(() => backend.close());
  const template = emulator.store.dump().users[0]!;
  emulator.store.putUser({ ...template, token: canaries.ORGFORM_TOKEN! });

  const stepSummary = join(outside, 'temp', 'step-summary.md');
  const githubOutput = join(outside, 'temp', 'github-output');
  const env: Record<string, string> = {
    ...Object.fromEntries(CREDENTIALS.map((name) => [name, canaries[name]!])),
    ORGFORM_PLAN_KEY: `${canaries.ORGFORM_PLAN_KEY}-long-enough-for-a-key`,
    ORGFORM_STATE_USERNAME: 'gitlab-ci-token',
    // A signed address, as a cloud store hands out: the signature is a credential.
    ...(backend === undefined ? {} : { ORGFORM_STATE: `${backend.url}/api/v4/projects/7/terraform/state/orgform?sig=${canaries.ORGFORM_STATE}&sv=2024` }),
    ORGFORM_BASE_URL: relay.url,
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: repo,
    GITHUB_STEP_SUMMARY: stepSummary,
    GITHUB_OUTPUT: githubOutput,
    CI_PROJECT_DIR: repo,
    HOME: join(outside, 'home'),
    ...options.env,
  };
  // The plan key as set: the canary inside it is what must not come out.
  canaries.ORGFORM_PLAN_KEY = env.ORGFORM_PLAN_KEY!;

  const texts: Array<{ where: string; text: string }> = [];
  // The checkout's credentials as .git/config holds them: base64 of more than the canary.
  const watched: Record<string, string> = { ...canaries, GIT_EXTRAHEADER_BASIC: basic };
  let runs = 0;
  return {
    repo,
    outside,
    outsideYaml,
    outsideSecret,
    canaries,
    env,
    emulator,
    backend,
    stepSummary,
    githubOutput,
    async run(args, more = {}, cwd = repo) {
      const result = await runCli(args, { cwd, env: { ...env, ...more } });
      runs += 1;
      const label = `run ${runs} (orgform ${args.join(' ')})`;
      texts.push({ where: `${label} stdout`, text: result.stdout }, { where: `${label} stderr`, text: result.stderr });
      const annotations = runnerAnnotations(`${result.stdout}\n${result.stderr}`);
      texts.push({ where: `${label} annotations, as the runner reads them`, text: JSON.stringify(annotations) });
      return result;
    },
    watch(name, secret) {
      watched[name] = secret;
    },
    collect(where, text) {
      texts.push({ where, text });
    },
    async expectNoCanary() {
      const scanned = [...texts];
      // Every file in the repository and outside it but the ones holding secrets on purpose.
      for (const dir of [repo, outside]) {
        if (!existsSync(dir)) continue;
        for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
          const path = join(entry.parentPath, entry.name);
          if (!entry.isFile() || path in planted || path.startsWith(join(repo, '.git'))) continue;
          if (Object.keys(options.files ?? {}).some((name) => join(repo, name) === path)) continue;
          scanned.push({ where: path, text: await readFile(path, 'latin1') });
        }
      }
      for (const path of [stepSummary, githubOutput]) scanned.push({ where: path, text: await readFile(path, 'latin1') });
      // The journal, where the state backend keeps it.
      if (backend !== undefined) scanned.push({ where: 'the state backend', text: JSON.stringify(backend.versions('/api/v4/projects/7/terraform/state/orgform')) });
      // What was sent to the service, less the token's own header.
      const token = canaries.ORGFORM_TOKEN!;
      scanned.push({ where: 'the requests to the service', text: relay.sent().replaceAll(`authorization: Bearer ${token}\r\n`, '').replaceAll(`Authorization: Bearer ${token}\r\n`, '') });
      const found: string[] = [];
      for (const { where, text } of scanned) {
        for (const [name, secret] of Object.entries(watched)) {
          if (forms(secret).some((form) => text.includes(form))) found.push(`${name} in ${where}`);
        }
      }
      expect(found).toEqual([]);
      return scanned.length;
    },
  };
}

/** The job's files of a GitLab merge request pipeline, beside GitHub's: the reports it asks for. */
export const GITLAB_REPORTS = ['--report', 'codequality=gl-code-quality-report.json', '--report', 'gitlab-terraform=plan-counts.json'];
