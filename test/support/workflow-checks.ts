/**
 * What a GitHub workflow that runs orgform must be (issue: safe on a hostile pull request), as lists
 * of problems, empty when there is none: for the examples, `orgform init`'s output and the
 * project's own workflows alike.
 *
 * - Pinned: every action by a full commit SHA with its tag as the comment (`@<40 hex> # vX.Y.Z`).
 *   orgform's own action is pinned to this release's tag in the repository and stamped with the
 *   tag's commit when the release is packed (scripts/pin-release.mjs), so `ownTag` allows it.
 * - Checked out without persisted credentials, and with `permissions` set at the workflow's top.
 * - Split: a job that runs on a pull request holds no secret but the plan's read-only ones, and the
 *   secrets that write live in an environment.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The secrets a pull request's job may hold: read-only ones. */
export const PLAN_SECRETS = ['ORGFORM_PLAN_TOKEN', 'ORGFORM_PLAN_STATE'];

export function pinningProblems(text: string, ownTag?: string): string[] {
  const problems: string[] = [];
  for (const [line, ref, comment] of text.matchAll(/^\s*-?\s*uses:\s*(\S+)(?:\s*#\s*(.*))?$/gm)) {
    if (ownTag !== undefined && ref === `orgform/orgform@${ownTag}`) continue;
    if (!/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/.test(ref ?? '')) problems.push(`not pinned by a commit SHA: ${line.trim()}`);
    else if (!/^v\d+(\.\d+)*\b/.test(comment ?? '')) problems.push(`no tag as the comment: ${line.trim()}`);
  }
  return problems;
}

function steps(workflow: Json): Array<[string, Json]> {
  return Object.entries(workflow.jobs as Record<string, Json>).flatMap(([name, job]) => ((job.steps ?? []) as Json[]).map((step): [string, Json] => [name, step]));
}

export function checkoutProblems(workflow: Json): string[] {
  const problems = workflow.permissions === undefined ? ['no top-level permissions'] : [];
  for (const [job, step] of steps(workflow)) {
    if (String(step.uses).startsWith('actions/checkout@') && step.with?.['persist-credentials'] !== false) problems.push(`${job}: checkout persists the credentials`);
  }
  return problems;
}

/** `jobs` are those that run on a pull request; the others must take their secrets from an environment. */
export function splitCredentialProblems(workflow: Json, pullRequestJobs: string[]): string[] {
  const problems: string[] = [];
  for (const [name, job] of Object.entries(workflow.jobs as Record<string, Json>)) {
    const secrets = [...JSON.stringify(job).matchAll(/secrets\.([A-Z0-9_]+)/g)].map((m) => m[1]!);
    if (pullRequestJobs.includes(name)) {
      for (const secret of secrets.filter((s) => !PLAN_SECRETS.includes(s))) problems.push(`${name} runs on pull requests and holds ${secret}`);
      if (job.environment !== undefined) problems.push(`${name} runs on pull requests and uses an environment`);
    } else if (secrets.length > 0 && job.environment === undefined) {
      problems.push(`${name} holds ${secrets.join(', ')} outside an environment`);
    }
  }
  if (JSON.stringify(workflow).includes('ORGFORM_PLAN_KEY')) {
    for (const name of pullRequestJobs) if (JSON.stringify(workflow.jobs[name]).includes('ORGFORM_PLAN_KEY')) problems.push(`${name} holds ORGFORM_PLAN_KEY`);
  }
  return problems;
}
