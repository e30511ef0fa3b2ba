/**
 * `orgform show PLANFILE`: a saved plan shown as plan showed it (text, the JSON document, Markdown
 * or the page), offline, as `terraform show` does: for review of a plan artifact, or for a pull
 * request comment made from the very plan that apply will be given. The file is checked as apply
 * checks it (schema, checksum, ORGFORM_PLAN_KEY's signature) before anything in it is shown.
 */
import { readSavedPlan } from '../../plan/read/read-saved-plan.js';
import { checkPlanSafety } from '../../plan/check-plan-safety.js';
import { commentOptions, createPlanView, describeSavedPlan, type PlanFormat } from './view.js';
import { useColor, type ColorSettings } from '../../text/ansi.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import type { CiSettings } from '../../ci/ci-settings.js';

export interface ShowFlags {
  format: PlanFormat;
  pageUrl?: string;
  color?: boolean;
}

export async function run(flags: ShowFlags, io: CliIO, args: string[], settings: { color: ColorSettings; ci: CiSettings; planKey: string | undefined }): Promise<ExitCode> {
  const path = args[0] ?? '';
  const comment = commentOptions(flags, settings.ci);
  const saved = await readSavedPlan(path, io.cwd, settings.planKey);
  const view = createPlanView({ format: flags.format, out: io.stdout, err: io.stderr, color: useColor(flags, settings.color, io.stdout), comment });
  await view.planMade(saved.plan, checkPlanSafety(saved.plan));
  // On standard error: the JSON, Markdown and HTML documents stay alone on standard output.
  io.stderr.write(describeSavedPlan(saved, path));
  return 0;
}
