/**
 * A pull request's files: links that lead out of the repository or into .git, directories of
 * them, names with line breaks and control characters, files whose errors would be huge. Nothing
 * outside the working tree is read as configuration, nothing is written through a link out of it,
 * and no error quotes what a file holds beyond a bounded excerpt of the pull request's own text.
 */
import { readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runnerCommands } from '../support/github-runner.js';
import { GITLAB_REPORTS, startHostileWorld } from './hostile-world.js';

const ORGS = 'version: 1\norganisations:\n  acme:\n    billing:\n      customerID: cus_acme_2\n';

describe('a pull request linking to files out of the repository', () => {
  it('gets no configuration read from outside the working tree or from .git: each is refused, naming the link and where it points', async () => {
    const world = await startHostileWorld({ files: { 'real.yaml': ORGS, 'conf/own.yaml': ORGS.replace('acme', 'globex') } });
    const { repo, outsideYaml, outsideSecret } = world;
    await symlink('.git/config', join(repo, 'orgs.yaml'));
    await symlink(relative(repo, outsideYaml), join(repo, 'team.yaml'));
    await symlink(outsideSecret, join(repo, 'credentials.yaml'));
    await symlink(outsideYaml, join(repo, 'conf', 'zz-leak.yaml'));
    await symlink(join(world.outside, 'home'), join(repo, 'linked-dir'));
    await symlink('../.git', join(repo, 'conf', 'git.yml'));
    const refused = [
      ['orgs.yaml', 'orgs.yaml is a symbolic link to ".git/config", which leads into the repository\'s .git directory'],
      ['team.yaml', `team.yaml is a symbolic link to ${JSON.stringify(relative(repo, outsideYaml))}, which leads outside the repository's working tree (${repo})`],
      ['credentials.yaml', `credentials.yaml is a symbolic link to ${JSON.stringify(outsideSecret)}, which leads outside`],
      ['conf', `conf/zz-leak.yaml is a symbolic link to ${JSON.stringify(outsideYaml)}, which leads outside`],
      ['linked-dir', `linked-dir is a symbolic link to ${JSON.stringify(join(world.outside, 'home'))}, which leads outside`],
      // Named directly, as the Action's `files` input may: outside, or in .git.
      [relative(repo, outsideYaml), `${relative(repo, outsideYaml)} is outside the repository's working tree`],
      ['.git/config', ".git/config is in the repository's .git directory"],
    ];
    for (const [given, reason] of refused) {
      for (const args of [['validate', '-f', given!, '--report', 'codequality=gl-code-quality-report.json'], ['plan', '-f', given!, '--format', 'markdown', '--out', 'plan.bin', ...GITLAB_REPORTS], ['plan', '-f', given!, '--format', 'json']]) {
        const result = await world.run(args);
        expect(result.code, `${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(1);
        expect(result.stderr).toContain(reason);
      }
    }
    expect(world.emulator.counters.total).toBe(0);
    // The files of the tree itself, and links that stay in it, are read as ever.
    await symlink('real.yaml', join(repo, 'inside.yaml'));
    expect((await world.run(['plan', '-f', 'inside.yaml'])).stdout).toContain('cus_acme_2');
    await world.expectNoCanary();
  });

  it("gets no configuration read through a working directory that is a link out of the checkout (the Action's and the component's working-directory)", async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    const { repo, outside } = world;
    // The job's step runs in infra/, which the pull request made a link to a directory of the
    // runner (holding team.yaml): the process's working directory is then that directory, with no
    // .git above it.
    await symlink(join(outside, 'home'), join(repo, 'infra'));
    const cwd = await realpath(join(repo, 'infra'));
    for (const job of [{}, { GITHUB_ACTIONS: undefined, GITLAB_CI: 'true' }]) {
      for (const args of [['validate'], ['plan', '--format', 'markdown'], ['plan', '-f', 'team.yaml', '--format', 'json'], ['plan', '-f', '.']]) {
        const result = await world.run(args, job, cwd);
        expect(result.code, `${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(1);
        expect(result.stderr).toContain(`is outside the repository's working tree (${repo})`);
      }
    }
    expect(world.emulator.counters.total).toBe(0);
    await world.expectNoCanary();
  });

  it('gets nothing written out of the working tree through a link: plan --out, --report, export --out, the journal', async () => {
    const world = await startHostileWorld({ state: 'file', files: { 'orgs.yaml': ORGS } });
    const { repo } = world;
    const bashrc = join(world.outside, 'home', '.bashrc');
    await writeFile(bashrc, 'export PATH=/usr/bin\n');
    await symlink(bashrc, join(repo, 'plan.bin'));
    await symlink('../runner/home/made-by-orgform.json', join(repo, 'gl-code-quality-report.json'));
    await symlink(join(world.outside, 'home'), join(repo, 'reports'));
    await symlink('.git/hooks-pre-commit', join(repo, 'export.yaml'));
    const attempts: Array<[string[], string]> = [
      [['plan', '--out', 'plan.bin'], 'Cannot write plan.bin: plan.bin is a symbolic link to'],
      [['validate', '--report', 'codequality=gl-code-quality-report.json'], 'Cannot write gl-code-quality-report.json: gl-code-quality-report.json is a symbolic link to "../runner/home/made-by-orgform.json", which leads outside'],
      [['plan', '--report', 'gitlab-terraform=reports/plan-counts.json'], 'Cannot write reports/plan-counts.json: reports (on the way to reports/plan-counts.json) is a symbolic link to'],
      [['export', '--out', 'export.yaml', '--force'], "Cannot write export.yaml: export.yaml is a symbolic link to \".git/hooks-pre-commit\", which leads into the repository's .git directory"],
    ];
    for (const [args, message] of attempts) {
      const result = await world.run(args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(message);
    }
    expect(await readFile(bashrc, 'utf8')).toBe('export PATH=/usr/bin\n');
    await expect(stat(join(world.outside, 'home', 'made-by-orgform.json'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(world.outside, 'home', 'plan-counts.json'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(repo, '.git', 'hooks-pre-commit'))).rejects.toThrow(/ENOENT/);

    // The journal beside orgs.yaml, a link planted in its place: refused before it is read or written.
    await symlink(join(world.outside, 'home'), join(repo, '.orgform'));
    const plan = await world.run(['plan']);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(`The state journal cannot be used: .orgform (on the way to ${join(repo, '.orgform', 'state.json')}) is a symbolic link to`);
    await expect(stat(join(world.outside, 'home', 'state.json'))).rejects.toThrow(/ENOENT/);
    await world.expectNoCanary();
  });

  it('gets no file of the runner read through a link named as a saved plan or a token file', async () => {
    const world = await startHostileWorld({ files: { 'orgs.yaml': ORGS } });
    await symlink(world.outsideSecret, join(world.repo, 'plan.bin'));
    await symlink(world.outsideSecret, join(world.repo, 'token.txt'));
    const show = await world.run(['show', 'plan.bin']);
    expect(show.code).toBe(1);
    expect(show.stderr).toContain('Cannot read the plan file: plan.bin is a symbolic link to');
    const withToken = await world.run(['plan', '--token-file', 'token.txt']);
    expect(withToken.code).toBe(1);
    expect(withToken.stderr).toContain('Cannot read the token file: token.txt is a symbolic link to');
    expect(world.emulator.counters.total).toBe(0);
    await world.expectNoCanary();
  });
});

describe('a pull request naming its files to break the log', () => {
  it('gets every name with line breaks and control characters escaped: one annotation each, no command of its own, no link followed out', async () => {
    const names = ['a\r\n::add-mask::x.yaml', 'b\n::error title=injected::pwned.yaml', 'c\u001b]8;;evil.example\u0007.yaml', 'd%0A::warning::e.yaml'];
    const files = Object.fromEntries(names.map((name) => [join('conf', name), 'version: 1\norganisations:\n  acme:\n    nope: 1\n']));
    const world = await startHostileWorld({ files });
    await symlink(world.outsideYaml, join(world.repo, 'conf', 'e\r\n::set-output name=x::y.yaml'));
    const result = await world.run(['validate', '-f', 'conf', '--report', 'codequality=gl-code-quality-report.json']);
    expect(result.code).toBe(1);
    const commands = runnerCommands(`${result.stdout}\n${result.stderr}`);
    // Each file's annotations name it exactly (escaped on the way, as the runner unescapes them);
    // the link out is refused like any other.
    const annotated = new Set(commands.filter((c) => c.command === 'error').map((c) => c.properties.file));
    expect([...annotated].sort()).toEqual([...names, 'e\r\n::set-output name=x::y.yaml'].map((name) => `conf/${name.replace(/\u001b/g, '\\u001b').replace(/\u0007/g, '\\u0007')}`).sort());
    // The runner acts on orgform's own commands only: the guard around the listing, and annotations.
    for (const c of commands) expect(c.command === 'error' || c.command === 'stop-commands' || /^[0-9a-f]{32}$/.test(c.command), c.command).toBe(true);
    expect(result.stderr).toContain('is a symbolic link to');
    await world.expectNoCanary();
  });

  it('gets oversized errors cut: a few YAML errors a file and a bounded message, whatever the file holds', async () => {
    const world = await startHostileWorld({
      files: {
        'orgs.yaml': `version: 1\n${']]]]\n'.repeat(2_000)}`,
        'tag.yaml': `version: 1\norganisations: !${'x'.repeat(100_000)} {}\n`,
      },
    });
    for (const file of ['orgs.yaml', 'tag.yaml']) {
      const plan = await world.run(['plan', '-f', file, '--format', 'markdown']);
      expect(plan.code).toBe(1);
      expect(plan.stderr.length + plan.stdout.length).toBeLessThan(4_000);
    }
    expect((await readFile(world.stepSummary, 'utf8')).length).toBeLessThan(8_000);
    await world.expectNoCanary();
  });
});
