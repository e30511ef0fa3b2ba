// @ts-check
/**
 * What an apply on the default branch did, read from orgform's events (`apply --format json`, one
 * JSON object a line: docs/cli.md), and said back to the pull request in one comment: applied,
 * nothing to apply, failed (the failures by name, and how to finish), refused (a plan that is not
 * the reviewed one: what differs, and how to go on) or not started (orgform's error), with the
 * run's link. The same words on GitHub and GitLab; each forge names its own way to go on.
 *
 * Plain Node, no dependencies: the Action runs it from its checkout, the component from the release.
 */
import { markdownDigest, splitDigestMarker } from './reviewed-plan.mjs';
import { errorLines, fenced, linkPlanPageIfAble, MAX_COMMENT_LENGTH } from './sticky-comment.mjs';

/**
 * @typedef {{ address: string, outcome: string, message: string }} Failure
 * @typedef {{ total: number, applied: number, already_done: number, skipped: number, not_started: number, stale: number, failed: number, interrupted: boolean }} Summary
 * @typedef {{ reason: string, message: string, details: string[], digest?: string, expected_digest?: string }} Refusal
 * @typedef {(
 *   | { kind: 'applied' | 'nothing' | 'failed', summary: Summary, failures: Failure[] }
 *   | { kind: 'refused', refusal: Refusal }
 *   | { kind: 'not-started', error: string }
 *   | { kind: 'cut-short', applied: string[], unknown: string[], failures: Failure[], error: string }
 *   | { kind: 'unreviewed-plan', markdown: string, digest?: string, reason: string }
 * )} ApplyOutcome  `unreviewed-plan`: no reviewed plan was found, so only a plan was made; this is what would be applied.
 *   `cut-short`: orgform was stopped after it started applying and before its summary (cancelled past its grace, killed, crashed):
 *   the changes it said were applied, and those it started without saying how they ended
 */

/** The events' lines, each an object with a `type`; anything else (a line cut short) is left out. @param {string} ndjson */
function events(ndjson) {
  /** @type {Array<Record<string, any>>} */
  const out = [];
  for (const line of ndjson.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value = JSON.parse(line);
      if (value !== null && typeof value === 'object' && typeof value.type === 'string') out.push(value);
    } catch {
      // not an event
    }
  }
  return out;
}

/**
 * The outcome, from the events and, when orgform stopped before any (a configuration error, the
 * service unreachable, the state locked), the end of what it wrote to stderr.
 * @param {string} ndjson
 * @param {string} stderr
 * @returns {ApplyOutcome}
 */
export function readApplyOutcome(ndjson, stderr) {
  const all = events(ndjson);
  const refused = all.find((e) => e.type === 'refused');
  if (refused !== undefined) {
    return {
      kind: 'refused',
      refusal: {
        reason: String(refused.reason),
        message: String(refused.message ?? ''),
        details: Array.isArray(refused.details) ? refused.details.map(String) : [],
        ...(typeof refused.digest === 'string' ? { digest: refused.digest } : {}),
        ...(typeof refused.expected_digest === 'string' ? { expected_digest: refused.expected_digest } : {}),
      },
    };
  }
  const end = all.find((e) => e.type === 'apply_end');
  const failures = all
    .filter((e) => e.type === 'change_end' && ['failed', 'stale', 'not_started'].includes(e.outcome))
    .map((e) => ({ address: String(e.address), outcome: String(e.outcome), message: failureMessage(e) }));
  if (end === undefined || typeof end.summary !== 'object') {
    // Stopped before its summary: once it started applying, some changes may have been written.
    if (!all.some((e) => e.type === 'apply_start')) return { kind: 'not-started', error: errorText(stderr) };
    const ended = new Set(all.filter((e) => e.type === 'change_end').map((e) => String(e.address)));
    const applied = all.filter((e) => e.type === 'change_end' && e.outcome === 'applied').map((e) => String(e.address));
    const unknown = all.filter((e) => e.type === 'change_start' && !ended.has(String(e.address))).map((e) => String(e.address));
    return { kind: 'cut-short', applied, unknown, failures, error: errorText(stderr) };
  }
  /** @type {Summary} */
  const summary = end.summary;
  const failed = summary.failed > 0 || summary.stale > 0 || summary.not_started > 0 || summary.interrupted === true;
  return { kind: failed ? 'failed' : summary.total === 0 ? 'nothing' : 'applied', summary, failures };
}

/**
 * The outcome of a run that only planned, for want of a reviewed plan (`plan --detailed-exitcode`):
 * nothing to apply (0), changes that nobody reviewed (2, with the plan and its digest), or an error.
 * @param {number} exitCode
 * @param {string} markdown
 * @param {string} stderr
 * @param {string} reason  why there is no reviewed plan
 * @returns {ApplyOutcome}
 */
export function planOnlyOutcome(exitCode, markdown, stderr, reason) {
  if (exitCode === 0) return { kind: 'nothing', summary: { total: 0, applied: 0, already_done: 0, skipped: 0, not_started: 0, stale: 0, failed: 0, interrupted: false }, failures: [] };
  if (exitCode !== 2) return { kind: 'not-started', error: errorText(stderr) };
  const text = splitDigestMarker(markdown).text;
  const digest = markdownDigest(markdown);
  return { kind: 'unreviewed-plan', markdown: text, reason, ...(digest === undefined ? {} : { digest }) };
}

/** @param {Record<string, any>} e */
function failureMessage(e) {
  const f = e.failure;
  if (f && typeof f === 'object') {
    const status = typeof f.status === 'number' ? ` (HTTP ${f.status})` : '';
    const said = f.service_code ? `${f.service_code}: ${f.service_message ?? ''}` : String(f.message ?? '');
    return `${f.operation ?? 'the request'}${status}: ${said}`.trim();
  }
  return typeof e.reason === 'string' ? e.reason : e.outcome;
}

/** The last lines orgform wrote to stderr, without the runner's workflow commands: its error. @param {string} stderr */
export function errorText(stderr) {
  return errorLines(stderr).split('\n').slice(-40).join('\n').trim() || 'orgform printed nothing.';
}

/**
 * A log line for the job, from the outcome (the events themselves are data).
 * @param {ApplyOutcome} outcome
 */
export function describeOutcome(outcome) {
  switch (outcome.kind) {
    case 'applied':
      return `orgform: applied ${count(outcome.summary.applied, 'change')}${outcome.summary.already_done > 0 ? `, ${outcome.summary.already_done} already done` : ''}.`;
    case 'nothing':
      return 'orgform: nothing to apply: the service already matches the configuration.';
    case 'failed':
      return `orgform: the apply failed: ${outcome.summary.applied} applied, ${outcome.summary.failed} failed, ${outcome.summary.stale} stale, ${outcome.summary.not_started} not started.`;
    case 'cut-short':
      return `orgform: the apply stopped before its end: ${outcome.applied.length} applied, ${outcome.unknown.length} not known to have ended.`;
    case 'refused':
      return `orgform: nothing was applied: ${outcome.refusal.message}`;
    case 'unreviewed-plan':
      return `orgform: nothing was applied: no reviewed plan (${outcome.reason}).`;
    default:
      return 'orgform: the apply did not start.';
  }
}

/** @param {number} n @param {string} what */
function count(n, what) {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/**
 * @typedef {object} ResultInput
 * @property {string} marker        the result comment's marker (commentMarker(key, 'apply'))
 * @property {ApplyOutcome} outcome  what happened
 * @property {string} commit        the commit applied
 * @property {string} runUrl        the run's (job's) page
 * @property {(digest: string) => string} applyByDigest  this forge's way to apply exactly the plan with this digest
 * @property {string} applyUnreviewed  this forge's way to apply without a review, on purpose
 * @property {string} [review]        what this forge calls what is reviewed ('pull request' by default, GitLab's 'merge request')
 */

/**
 * The one comment the merged pull request gets about its apply (written once, then updated by a
 * re-run). Never longer than MAX_COMMENT_LENGTH: what is cut is said.
 * @param {ResultInput} input
 */
export function composeResultComment(input) {
  const { outcome } = input;
  const head = `${input.marker}\n`;
  const foot = `\n<sub>orgform apply of ${input.commit.slice(0, 7) || 'this commit'}: [the run](${input.runUrl}); a re-run updates this comment.</sub>\n`;
  const body = resultBody(input, outcome);
  const room = MAX_COMMENT_LENGTH - head.length - foot.length;
  return `${head}${body.length <= room ? body : `${body.slice(0, room - 80)}\n\n_…cut to fit a comment: the rest is in the run's log._\n`}${foot}`;
}

/**
 * @param {ResultInput} input
 * @param {ApplyOutcome} outcome
 */
function resultBody(input, outcome) {
  switch (outcome.kind) {
    case 'applied':
      return `✅ **orgform apply: applied** the reviewed plan: ${counts(outcome.summary)}.\n`;
    case 'nothing':
      return '✅ **orgform apply: already done.** The plan now has no changes: the service already matches the configuration (applied before, by an earlier run or by hand). Nothing was written.\n';
    case 'failed':
      return [
        `❌ **orgform apply: failed.** ${counts(outcome.summary)}.\n`,
        failureList(outcome.failures),
        '\n**To finish:** fix the cause the failures name, then re-run this job. Once part of the plan is applied, what remains is no longer the plan reviewed: the re-run applies nothing, and shows the plan that remains with its digest; ',
        `after reviewing it, ${input.applyByDigest('<that digest>')}.\n`,
      ].join('');
    case 'cut-short':
      return [
        `❌ **orgform apply: stopped before its end.** ${outcome.applied.length} applied, ${outcome.unknown.length} started and not known to have ended; the rest not started.\n`,
        failureList([
          ...outcome.applied.map((address) => ({ address, outcome: 'applied', message: 'done' })),
          ...outcome.unknown.map((address) => ({ address, outcome: 'unknown', message: 'sent, or about to be, when orgform stopped' })),
          ...outcome.failures,
        ]),
        `\norgform stopped (the job was cancelled or timed out, or orgform was killed) before it said how the run ended. It said:\n\n${fenced(outcome.error)}`,
        '\n**To finish:** re-run this job. What remains is no longer the plan reviewed: the re-run applies nothing, and shows the plan that remains with its digest; ',
        `after reviewing it, ${input.applyByDigest('<that digest>')}.\n`,
      ].join('');
    case 'refused':
      return refusedBody(input, outcome.refusal);
    case 'unreviewed-plan':
      return [
        `⛔ **orgform apply: not started.** No reviewed plan: ${outcome.reason}. Nothing was applied.\n\n`,
        `The plan now${outcome.digest === undefined ? '' : ` (digest \`${outcome.digest}\`)`}, which nobody reviewed:\n\n`,
        // No page was made of a plan nobody may apply: its links lead to the run, whose log has the plan.
        `<details><summary>The plan</summary>\n\n${linkPlanPageIfAble(outcome.markdown, input.runUrl).trim()}\n\n</details>\n\n`,
        howToGoOn(input, outcome.digest),
      ].join('');
    default:
      return `⛔ **orgform apply: not started.** Nothing was applied. orgform said:\n\n${fenced(outcome.error)}\nFix the cause, then re-run this job: it applies the reviewed plan if the plan is still the same.\n`;
  }
}

/** @param {ResultInput} input @param {Refusal} refusal */
function refusedBody(input, refusal) {
  if (refusal.reason !== 'not_reviewed') return `⛔ **orgform apply: refused.** Nothing was applied.\n\n${fenced([refusal.message, ...refusal.details].join('\n'))}`;
  return [
    `⛔ **orgform apply: refused.** The plan now is not the plan reviewed on this ${input.review ?? 'pull request'}. Nothing was applied.\n\n`,
    `Reviewed: \`${refusal.expected_digest ?? '?'}\`  \nNow: \`${refusal.digest ?? '?'}\`\n\n`,
    `What differs:\n\n${fenced(refusal.details.join('\n'))}\n`,
    howToGoOn(input, refusal.digest),
  ].join('');
}

/** @param {ResultInput} input @param {string | undefined} digest */
function howToGoOn(input, digest) {
  return [
    '**How to go on:**\n',
    `- If the plan now is what should happen (an earlier merge not applied yet, a change by hand that the configuration now follows), review it in the run's log, then ${input.applyByDigest(digest ?? '<its digest>')}: only a plan with that digest is applied.\n`,
    `- If not, find what changed since the review (the service, by hand; another merge), and put it right or declare it in a new ${input.review ?? 'pull request'}.\n`,
    `- To apply a plan without a review, on purpose: ${input.applyUnreviewed}.\n`,
  ].join('');
}

/** @param {Summary} s */
function counts(s) {
  const parts = [`${s.applied} applied`];
  if (s.already_done > 0) parts.push(`${s.already_done} already done`);
  if (s.skipped > 0) parts.push(`${s.skipped} skipped`);
  if (s.failed > 0) parts.push(`${s.failed} failed`);
  if (s.stale > 0) parts.push(`${s.stale} stale (changed since the plan: not written)`);
  if (s.not_started > 0) parts.push(`${s.not_started} not started`);
  if (s.interrupted) parts.push('interrupted');
  return parts.join(', ');
}

/** At most this many failures are listed by name; the run's log has them all. */
const LISTED_FAILURES = 50;

/** @param {Failure[]} failures */
function failureList(failures) {
  if (failures.length === 0) return '';
  const lines = failures.slice(0, LISTED_FAILURES).map((f) => `${f.outcome.replace('_', ' ')}  ${f.address}: ${f.message}`);
  if (failures.length > LISTED_FAILURES) lines.push(`…and ${failures.length - LISTED_FAILURES} more: see the run's log.`);
  return `\n${fenced(lines.join('\n'))}`;
}
