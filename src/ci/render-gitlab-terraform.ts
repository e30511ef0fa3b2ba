/**
 * The counts GitLab's merge request widget shows for a `artifacts:reports:terraform` artifact:
 * `{"create": n, "update": n, "delete": n}`, the three keys GitLab's parser requires
 * (gitlab-org/gitlab, lib/gitlab/ci/parsers/terraform/tfplan.rb). Pure.
 *
 * orgform's actions map onto them by what they do to the service, as the plan's markers already
 * say: `+ accept` creates a membership (create), `~` billing and the active organisation are
 * updates (update), `-` revocations and channel removals delete (delete). The widget has no place
 * for an incomplete plan: the problems are in the job's log, its exit code and the Code Quality
 * report.
 */
import type { Action, Plan } from '../plan/types.js';

export interface GitlabTerraformCounts {
  create: number;
  update: number;
  delete: number;
}

const KEY: Readonly<Record<Action, keyof GitlabTerraformCounts>> = {
  accept: 'create',
  update: 'update',
  delete: 'delete',
};

export function gitlabTerraformCounts(plan: Pick<Plan, 'changes'>): GitlabTerraformCounts {
  const counts: GitlabTerraformCounts = { create: 0, update: 0, delete: 0 };
  for (const change of plan.changes) counts[KEY[change.action]] += 1;
  return counts;
}

export function renderGitlabTerraform(plan: Pick<Plan, 'changes'>): string {
  return `${JSON.stringify(gitlabTerraformCounts(plan))}\n`;
}
