/**
 * Split credentials, as docs/pipelines.md sets them up: the plan of a pull request needs only
 * read access to the state. A PostgreSQL role granted SELECT and nothing else plans (and sees what
 * apply recorded); the same role cannot apply, and says so before it changes anything.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { setupEmulatorWorkspace } from '../support/emulator-workspace.js';
import { createTestDatabase, query } from '../support/postgres.js';
import { runCli } from '../support/run-cli.js';
import { CHANGING_CONFIG, makeWorkspace } from '../support/workspace.js';

/** A role that may only read the state's tables: what the plan job's ORGFORM_PLAN_STATE names. */
async function readOnlyUrl(admin: string): Promise<string> {
  const role = `reader_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await query(admin, `CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
  const schemas = await query<{ nspname: string }>(admin, "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' AND nspname <> 'public'");
  for (const { nspname } of schemas) {
    await query(admin, `GRANT USAGE ON SCHEMA "${nspname}" TO ${role}`);
    await query(admin, `GRANT SELECT ON ALL TABLES IN SCHEMA "${nspname}" TO ${role}`);
  }
  const url = new URL(admin);
  url.username = role;
  url.password = password;
  return url.toString();
}

describe('split credentials: a read-only state', () => {
  it('plans with a role that may only SELECT, seeing what apply recorded, and that role cannot apply', async () => {
    const { cwd, env } = await setupEmulatorWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const database = await createTestDatabase('split');
    const applied = await runCli(['apply', '--auto-approve'], { cwd, env: { ...env, ORGFORM_STATE: `${database}?state=prod` } });
    expect(applied.code, applied.stderr).toBe(0);

    const reader = `${await readOnlyUrl(database)}?state=prod`;
    const fresh = await makeWorkspace({ 'orgs.yaml': CHANGING_CONFIG });
    const plan = await runCli(['plan', '--detailed-exitcode', '--no-color'], { cwd: fresh, env: { ...env, ORGFORM_STATE: reader } });
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('No changes');

    const apply = await runCli(['apply', '--auto-approve'], { cwd: fresh, env: { ...env, ORGFORM_STATE: reader } });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/permission denied|may not do this/);
    expect(apply.stderr).not.toContain(new URL(reader).password);
  });
});
