/**
 * GitLab reports: the Code Quality report and the gitlab-terraform counts, checked against the
 * schemas written from GitLab's documentation and parser; the findings they are made from; and
 * the workspace-relative paths both GitHub and GitLab need.
 */
import { describe, expect, it } from 'vitest';
import { configFindings, planFindings, type Finding } from '../../src/text/findings.js';
import { codeQualityIssues, renderCodeQuality } from '../../src/ci/render-codequality.js';
import { gitlabTerraformCounts, renderGitlabTerraform } from '../../src/ci/render-gitlab-terraform.js';
import { workspacePath } from '../../src/ci/workspace-path.js';
import { codeQualityErrors, gitlabTerraformErrors } from '../support/report-schemas.js';
import { acceptInvitation, billing, everyKindPlan, makePlan, problem, removeChannel, revokeInvitation, setActive } from '../support/plan-fixtures.js';

const ROOTS = { cwd: '/repo/config', root: '/repo', defaultFile: 'orgs.yaml' };

describe('workspacePath', () => {
  it('is relative to the root, with forward slashes and no ./', () => {
    expect(workspacePath('orgs.yaml', { cwd: '/repo', root: '/repo' })).toBe('orgs.yaml');
    expect(workspacePath('./teams/a.yaml', { cwd: '/repo/config', root: '/repo' })).toBe('config/teams/a.yaml');
    expect(workspacePath('/repo/x/orgs.yaml', { cwd: '/elsewhere', root: '/repo' })).toBe('x/orgs.yaml');
  });

  it('keeps the path as given for a file outside the root', () => {
    expect(workspacePath('../shared/orgs.yaml', { cwd: '/repo', root: '/repo' })).toBe('../shared/orgs.yaml');
    expect(workspacePath('/etc/orgs.yaml', { cwd: '/repo', root: '/repo' })).toBe('/etc/orgs.yaml');
    // A sibling whose name starts with the root's is outside too.
    expect(workspacePath('/repo-2/orgs.yaml', { cwd: '/repo', root: '/repo' })).toBe('/repo-2/orgs.yaml');
  });
});

describe('findings', () => {
  it('carry configuration problems with their positions', () => {
    expect(configFindings([{ file: 'orgs.yaml', line: 5, col: 7, message: 'unknown key "customerId"' }])).toEqual([
      { check: 'config', level: 'error', message: 'unknown key "customerId"', file: 'orgs.yaml', line: 5, col: 7 },
    ]);
  });

  it('place a plan problem at its organisation key, without saying the position twice', () => {
    const plan = makePlan({ problems: [problem('acme', 'orgs.yaml:3:3: organisation id "x" was not found'), problem('ghost', 'not readable')] });
    const desired = { organisations: [{ slug: 'acme', source: { file: 'orgs.yaml', line: 3, col: 3 } }], activeOrganisation: undefined };
    expect(planFindings(plan, desired as never)).toEqual([
      { check: 'plan', level: 'error', message: 'organisation id "x" was not found', file: 'orgs.yaml', line: 3, col: 3 },
      { check: 'plan', level: 'error', message: 'organisation "ghost": not readable' },
    ]);
  });

  it('place an activeOrganisation problem at the activeOrganisation key', () => {
    const plan = makePlan({ problems: [{ organisation: null, address: 'activeOrganisation', message: 'a.yaml:2:21: not yours' }] });
    const desired = { organisations: [], activeOrganisation: { slug: 'x', source: { file: 'a.yaml', line: 2, col: 21 } } };
    expect(planFindings(plan, desired)).toEqual([{ check: 'plan', level: 'error', message: 'not yours', file: 'a.yaml', line: 2, col: 21 }]);
  });
});

describe('renderCodeQuality', () => {
  const findings: Finding[] = [
    { check: 'config', level: 'error', message: 'unknown key "customerId"', file: 'orgs.yaml', line: 5, col: 7 },
    { check: 'config', level: 'error', message: 'unknown key "customerId"', file: 'orgs.yaml', line: 9, col: 7 },
    { check: 'plan', level: 'error', message: 'organisation "ghost": not readable' },
    { check: 'config', level: 'warning', message: 'bell \u0007 and\nbreak', file: '../../outside.yaml', line: 2, col: 1 },
  ];

  it('writes a report valid against GitLab’s documented format', () => {
    const text = renderCodeQuality(findings, ROOTS);
    expect(codeQualityErrors(text)).toEqual([]);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('says what, where and how bad, with paths relative to the repository', () => {
    const [first, , third, fourth] = codeQualityIssues(findings, ROOTS);
    expect(first).toMatchObject({ description: 'unknown key "customerId"', check_name: 'orgform/config', severity: 'blocker', location: { path: 'config/orgs.yaml', lines: { begin: 5 } } });
    expect(third).toMatchObject({ check_name: 'orgform/plan', severity: 'critical', location: { path: 'config/orgs.yaml', lines: { begin: 1 } } });
    expect(fourth).toMatchObject({ description: 'bell \\u0007 and\\nbreak', severity: 'minor', location: { path: '../../outside.yaml' } });
  });

  it('gives repeated problems distinct fingerprints that do not change when lines move', () => {
    const issues = codeQualityIssues(findings, ROOTS);
    expect(new Set(issues.map((i) => i.fingerprint)).size).toBe(issues.length);
    const moved = codeQualityIssues(findings.map((f) => ({ ...f, line: (f.line ?? 0) + 10 })), ROOTS);
    expect(moved.map((i) => i.fingerprint)).toEqual(issues.map((i) => i.fingerprint));
  });

  it('writes an empty array when nothing is wrong', () => {
    expect(renderCodeQuality([], ROOTS)).toBe('[]\n');
    expect(codeQualityErrors('[]\n')).toEqual([]);
  });

  it('the schema check fails reports GitLab would not read', () => {
    const good = codeQualityIssues(findings.slice(0, 1), ROOTS)[0]!;
    expect(codeQualityErrors(JSON.stringify([{ ...good, severity: 'error' }]))).not.toEqual([]);
    expect(codeQualityErrors(JSON.stringify([{ ...good, location: { path: './orgs.yaml', lines: { begin: 1 } } }]))).not.toEqual([]);
    expect(codeQualityErrors(JSON.stringify([{ ...good, location: { path: 'orgs.yaml' } }]))).not.toEqual([]);
    expect(codeQualityErrors(JSON.stringify([good, good]))).toEqual(['fingerprints are not unique']);
    expect(codeQualityErrors(`\ufeff${JSON.stringify([good])}`)).toEqual(['starts with a byte order mark']);
  });
});

describe('renderGitlabTerraform', () => {
  it('counts accepts as create, billing and the active organisation as update, revocations and removals as delete', () => {
    expect(gitlabTerraformCounts(everyKindPlan())).toEqual({ create: 1, update: 2, delete: 2 });
    const plan = makePlan({ changes: [acceptInvitation('a', 'i1'), acceptInvitation('b', 'i2'), billing('a', {}), setActive('b', null), revokeInvitation('a', 'i3'), removeChannel('a', 'c')] });
    expect(JSON.parse(renderGitlabTerraform(plan))).toEqual({ create: 2, update: 2, delete: 2 });
  });

  it('writes the shape GitLab’s parser requires, zeros included', () => {
    expect(gitlabTerraformErrors(renderGitlabTerraform(everyKindPlan()))).toEqual([]);
    expect(renderGitlabTerraform(makePlan())).toBe('{"create":0,"update":0,"delete":0}\n');
    expect(gitlabTerraformErrors(renderGitlabTerraform(makePlan()))).toEqual([]);
    expect(gitlabTerraformErrors('{"create":1,"update":0}')).not.toEqual([]);
    expect(gitlabTerraformErrors('{"create":-1,"update":0,"delete":0}')).not.toEqual([]);
  });
});
