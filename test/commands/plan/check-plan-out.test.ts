import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPlanOut } from '../../../src/commands/plan/check-plan-out.js';
import { runPlan } from '../../../src/commands/plan/flow.js';
import { recordingPlanView } from '../../support/recording-view.js';
import { createScriptedClient } from '../../support/scripted-client.js';
import { makeWorkspace } from '../../support/workspace.js';

const CONFIG = 'version: 1\norganisations:\n  acme:\n    billing:\n      billingEmail: finance@acme.test\n';

describe('checkPlanOut', () => {
  it('lets --out replace a plan that orgform saved, an empty file, or nothing at all', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': CONFIG, 'empty.json': '' });
    const client = createScriptedClient([{ id: 'org_acme', slug: 'acme', member: true, billing: { billingEmail: 'old@acme.test' } }]);
    // A plan as plan --out saves it, whatever the saved plan's format holds.
    await runPlan({ selection: { files: [] }, parallelism: 1, out: 'plan.json' }, { cwd, now: () => 0, openClient: async () => ({ client }) }, recordingPlanView());
    for (const name of ['plan.json', 'empty.json', 'none.json']) {
      await expect(checkPlanOut(join(cwd, name), name, { force: false, tree: { root: cwd, real: cwd } })).resolves.toBeUndefined();
    }
  });

  it('refuses any other file unless forced, saying what to do', async () => {
    const cwd = await makeWorkspace({ 'orgs.yaml': CONFIG, 'other.json': '{"orgformSavedPlanX": 1}\n' });
    for (const name of ['orgs.yaml', 'other.json']) {
      await expect(checkPlanOut(join(cwd, name), name, { force: false, tree: { root: cwd, real: cwd } })).rejects.toThrow(`${name} exists and is not an orgform plan: --out would replace it. Nothing was written; choose another --out, or pass --force to replace it.`);
      await expect(checkPlanOut(join(cwd, name), name, { force: true, tree: { root: cwd, real: cwd } })).resolves.toBeUndefined();
    }
  });

  it('refuses a directory even when forced', async () => {
    const cwd = await makeWorkspace();
    await mkdir(join(cwd, 'plans'));
    await writeFile(join(cwd, 'plans', 'x'), '');
    await expect(checkPlanOut(join(cwd, 'plans'), 'plans', { force: true, tree: { root: cwd, real: cwd } })).rejects.toThrow('Cannot write plans: it is a directory.');
  });
});
