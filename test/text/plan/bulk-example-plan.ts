/**
 * The plan of examples/bulk (300 organisations in three files) against the emulator started with
 * the data beside it, as docs/bulk.md runs it: planned over loopback and saved with `plan --out`,
 * then read back as the Plan the views are given.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readEmulatorData } from '../../../src/emulator/data.js';
import { readSavedPlan } from '../../../src/plan/read/read-saved-plan.js';
import type { Plan } from '../../../src/plan/types.js';
import { setupEmulatorWorkspace } from '../../support/emulator-workspace.js';
import { runCli } from '../../support/run-cli.js';

const BULK = join(import.meta.dirname, '..', '..', '..', 'examples', 'bulk');

export async function planBulkExample(): Promise<Plan> {
  // Copied into the workspace: orgform reads configuration only from inside the working tree.
  const files = Object.fromEntries(readdirSync(BULK).filter((n) => n.endsWith('.yaml')).map((n) => [`bulk/${n}`, readFileSync(join(BULK, n), 'utf8')]));
  const { cwd, env } = await setupEmulatorWorkspace(files, { data: await readEmulatorData(join(BULK, 'emulator-data.json')) });
  const out = join(cwd, 'plan.bin');
  const run = await runCli(['plan', '-f', 'bulk', '--state', join(cwd, 'state.json'), '--out', out], { cwd, env });
  if (run.code !== 0 && run.code !== 2) throw new Error(`plan of examples/bulk exited ${run.code}: ${run.stderr}`);
  return (await readSavedPlan(out, cwd, undefined)).plan;
}
