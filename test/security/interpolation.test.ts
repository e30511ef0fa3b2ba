/**
 * A pull request that writes `${NAME}` to read the job's credentials into a value: the plan, the
 * comment, the saved plan, the reports or a request would carry it out. Only ORGFORM_VAR_…
 * variables are read, and a message never quotes a value that came from the environment.
 */
import { describe, expect, it } from 'vitest';
import { GITLAB_REPORTS, startHostileWorld, type HostileWorld } from './hostile-world.js';

/** Every output of a plan job: validate and plan in each format, a saved plan and its show, GitLab's reports. */
async function runEveryOutput(world: HostileWorld, files: string[] = []): Promise<number[]> {
  const f = files.flatMap((file) => ['-f', file]);
  const codes: number[] = [];
  for (const args of [
    ['validate', ...f, '--report', 'codequality=gl-code-quality-report.json'],
    ['plan', ...f],
    ['plan', '--format', 'json', ...f],
    ['plan', '--format', 'markdown', '--detailed-exitcode', '--out', 'plan.bin', ...f, ...GITLAB_REPORTS],
    ['show', 'plan.bin', '--format', 'markdown'],
  ]) {
    codes.push((await world.run(args)).code);
  }
  return codes;
}

/** An orgs file declaring `lines` under `organisations:`. */
function orgsFile(...lines: string[]): string {
  return ['version: 1', 'organisations:', ...lines, ''].join('\n');
}

describe('a pull request reading variables into its values', () => {
  it('gets none of the job credentials: each ${NAME} is an error naming the variable, in every output', async () => {
    const world = await startHostileWorld({
      files: {
        'orgs.yaml': orgsFile(
          '  acme:',
          '    billing:',
          '      billingEmail: "${ORGFORM_TOKEN}@acme.example"',
          '      customerID: "${GITHUB_TOKEN}"',
          '      subscriptionID: pre-${CI_JOB_TOKEN}-post',
          '      platformID: "${ORGFORM_STATE}"',
          '    invitations:',
          '      revoke: ["${GITLAB_API_TOKEN}"]',
          '    notificationChannels:',
          '      remove: ["${ORGFORM_PLAN_KEY}"]',
          '  globex:',
          '    id: "${ORGFORM_STATE_PASSWORD}"',
          '  initech:',
          '    id: ${ACTIONS_RUNTIME_TOKEN}',
        ),
      },
    });
    const codes = await runEveryOutput(world);
    expect(codes.slice(0, 4)).toEqual([1, 1, 1, 1]);
    const validate = await world.run(['validate']);
    for (const name of ['ORGFORM_TOKEN', 'GITHUB_TOKEN', 'CI_JOB_TOKEN', 'ORGFORM_STATE', 'GITLAB_API_TOKEN', 'ORGFORM_PLAN_KEY', 'ORGFORM_STATE_PASSWORD', 'ACTIONS_RUNTIME_TOKEN']) {
      expect(validate.stderr).toContain(`\${${name}} cannot be read: only variables named ORGFORM_VAR_… are`);
    }
    // Nothing was asked of the service: the configuration was refused first.
    expect(world.emulator.counters.total).toBe(0);
    expect(await world.expectNoCanary()).toBeGreaterThan(15);
  });

  it('gets them through no anchor, alias, merge key or tag either', async () => {
    const world = await startHostileWorld({
      files: {
        'orgs/aliases.yaml': [
          'version: 1',
          'defaults:',
          '  billing:',
          '    customerID: &stolen "${GITHUB_TOKEN}"',
          'organisations:',
          '  acme:',
          '    billing:',
          '      subscriptionID: !!str ${CI_JOB_TOKEN}',
          '      platformID: &again "${ORGFORM_TOKEN}"',
          '  globex:',
          '    billing:',
          '      platformID: *again',
          '      subscriptionID: *stolen',
          '',
        ].join('\n'),
        'orgs/merge.yaml': ['version: 1', 'organisations:', '  initech:', '    <<: {id: "${GITLAB_API_TOKEN}"}', '    billing: {platformID: "${ORGFORM_STATE_PASSWORD}"}', ''].join('\n'),
        'orgs/tags.yaml': ['version: 1', 'organisations:', '  hooli-eu:', '    billing:', '      platformID: !!binary Y2FuYXJ5', '      customerID: "${ACTIONS_RUNTIME_TOKEN}"', ''].join('\n'),
      },
    });
    // Each file alone, so that no other file's problem keeps a plan from being made of it.
    for (const file of ['orgs/aliases.yaml', 'orgs/merge.yaml', 'orgs/tags.yaml']) expect((await runEveryOutput(world, [file])).slice(0, 4)).toEqual([1, 1, 1, 1]);
    expect(world.emulator.counters.total).toBe(0);
    await world.expectNoCanary();
  });

  it('sees no value of a configuration variable echoed in a problem, an annotation, a report or the job summary', async () => {
    const world = await startHostileWorld({
      files: {
        'orgs.yaml': orgsFile(
          '  acme:',
          '    billing:',
          '      billingEmail: ${ORGFORM_VAR_EMAIL}',
          '    invitations:',
          '      revoke: ["${ORGFORM_VAR_INVITATION}", "${ORGFORM_VAR_INVITATION}"]',
          '  globex:',
          '    id: "${ORGFORM_VAR_ID}"',
        ),
      },
      env: { ORGFORM_VAR_EMAIL: 'cfg-canary-not-an-email', ORGFORM_VAR_INVITATION: ' cfg-canary-invitation', ORGFORM_VAR_ID: 'cfg-canary-id\u202e' },
    });
    for (const name of ['ORGFORM_VAR_EMAIL', 'ORGFORM_VAR_INVITATION', 'ORGFORM_VAR_ID']) world.watch(name, world.env[name]!.trim().replace('\u202e', ''));
    const codes = await runEveryOutput(world);
    expect(codes.slice(0, 4)).toEqual([1, 1, 1, 1]);
    const plan = await world.run(['plan']);
    expect(plan.stderr).toContain('billing.billingEmail "${ORGFORM_VAR_EMAIL}" (its value is not shown) is not an e-mail address');
    expect(plan.stderr).toContain('invitation id "${ORGFORM_VAR_INVITATION}" (its value is not shown) must not start or end with whitespace');
    expect(await world.expectNoCanary()).toBeGreaterThan(15);
  });
});

describe('a configuration variable the pipeline set', () => {
  it('is shown in the plan as the value apply will write (a reviewer approves what is written), and nothing else comes with it', async () => {
    const world = await startHostileWorld({
      state: 'file',
      files: { 'orgs.yaml': 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: ${ORGFORM_VAR_FINANCE}\n' },
      env: { ORGFORM_VAR_FINANCE: 'finance+review@acme.example' },
    });
    const plan = await world.run(['plan', '--format', 'markdown', '--out', 'plan.bin']);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('finance+review@acme.example');
    const apply = await world.run(['apply', 'plan.bin']);
    expect(apply.code).toBe(0);
    expect(world.emulator.store.dump().organisations.find((o) => o.id === 'org_acme')?.billing?.billingEmail).toBe('finance+review@acme.example');
    await world.expectNoCanary();
  });
});
