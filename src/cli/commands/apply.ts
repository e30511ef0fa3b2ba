/**
 * `orgform apply [PLANFILE]`: a fresh plan (confirmed on a terminal, or --auto-approve), or a saved
 * plan that is refused whole if anything it was based on changed. Wiring only: the engine is
 * apply/apply-plan.ts and the views are render/render-apply.ts.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DesiredState } from '../../config/types.js';
import { ConfigError, OrgformError, UsageError } from '../../errors.js';
import type { ApplySummary } from '../../apply/events.js';
import { checkChangeBudget, describeChangeBudget } from '../../plan/check-change-budget.js';
import { findStale } from '../../plan/find-stale.js';
import { parseSavedPlan, type SavedPlan } from '../../plan/saved-plan.js';
import { Journal } from '../../state/journal.js';
import { acquireLock } from '../../state/lock.js';
import type { JwtExpiry } from '../../api/read-jwt-expiry.js';
import { loadDesiredState, openClient, retryBaseMs, serviceKey, statePathFor, useColor } from '../command-context.js';
import type { CliIO, ExitCode } from '../io.js';
import { readAnswer } from '../read-answer.js';
import { runApplyWithProgress, type RetryRelay } from '../run-apply-with-progress.js';
import { renderPlan } from './plan.js';

export interface ApplyFlags {
  file?: string[];
  baseUrl?: string;
  tokenFile?: string;
  token?: string;
  tokenCommand?: string;
  maxRps?: number;
  parallelism: number;
  format: 'text' | 'json';
  autoApprove?: boolean;
  state?: string;
  target?: string[];
  shard?: string;
  maxChanges?: number;
  color?: boolean;
}

async function hashFiles(paths: string[], cwd: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const path of paths) {
    try {
      out.set(path, createHash('sha256').update(await readFile(resolve(cwd, path))).digest('hex'));
    } catch {
      out.set(path, null);
    }
  }
  return out;
}

/**
 * ORGFORM_PROGRESS_INTERVAL_MS: the first interval between progress lines of a long apply in a log
 * (default 5 s); tests shorten it. Read before anything is done, so a bad value changes nothing.
 */
function progressIntervalFromEnv(io: CliIO): number | undefined {
  const raw = io.env.ORGFORM_PROGRESS_INTERVAL_MS;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 10) {
    throw new UsageError(`ORGFORM_PROGRESS_INTERVAL_MS must be a whole number of at least 10 (got "${raw}").`);
  }
  return n;
}

/** The job summary's view of an apply with nothing to do. */
const NOTHING_APPLIED: ApplySummary = { total: 0, applied: 0, alreadyDone: 0, skipped: 0, notStarted: 0, failed: 0, interrupted: false, elapsedMs: 0, results: [] };

export async function run(flags: ApplyFlags, io: CliIO, args: string[]): Promise<ExitCode> {
  const planFile = args[0];
  const progressIntervalMs = progressIntervalFromEnv(io);
  // With --format json, stdout is for machines: the plan and the question go to stderr.
  const human = flags.format === 'json' ? io.stderr : io.stdout;
  const interactive = io.stdin.isTTY === true && human.isTTY === true;
  if (planFile === undefined && !flags.autoApprove && !interactive) {
    const why = io.stdin.isTTY === true ? 'the question would not reach a terminal (output is redirected)' : 'standard input is not a terminal';
    throw new UsageError(
      `apply asks for confirmation, but no one can answer: ${why}. Review the plan (orgform plan), then run orgform apply --auto-approve, or save it with orgform plan --out FILE and run orgform apply FILE. Nothing was changed.`,
    );
  }
  if (planFile !== undefined && ((flags.file?.length ?? 0) > 0 || (flags.target?.length ?? 0) > 0 || flags.shard !== undefined)) {
    throw new UsageError('A saved plan already fixes the files, targets and shard it covers: drop -f, --target and --shard when applying PLANFILE.');
  }

  // GitHub Actions: problems annotated, long output folded, the outcome in the job summary.
  const pipeline = await (await import('../pipeline-output.js')).openPipelineOutput(io);
  let saved: SavedPlan | undefined;
  let desired: DesiredState;
  let selected: DesiredState;
  if (planFile !== undefined) {
    let text: string;
    try {
      text = await readFile(resolve(io.cwd, planFile), 'utf8');
    } catch (err) {
      throw new OrgformError('PLAN_INVALID', `Cannot read the plan file ${planFile}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
    }
    saved = parseSavedPlan(text, planFile);
    desired = selected = saved.desired;
  } else {
    ({ desired, selected } = await loadDesiredState(flags, io).catch(async (err: unknown) => {
      if (err instanceof ConfigError) await pipeline.annotate((await import('../../render/findings.js')).configFindings(err.problems), human);
      throw err;
    }));
  }

  // Retries are reported as events of the change they belong to, once the apply view listens.
  const retries: RetryRelay = {};
  // When the run cannot go on (only 429s for too long, the token command failed part way), nothing
  // new starts, what is in flight finishes, the journal keeps what was done, and this says why.
  const stopper = new AbortController();
  let halted: OrgformError | undefined;
  let tokenExpiry: JwtExpiry | undefined;
  const client = await openClient(flags, io, {
    onRetry: (event) => retries.listener?.(event),
    onRate: (event) => retries.rate?.(event),
    onHalt: (err) => {
      halted ??= err;
      stopper.abort();
    },
    onTokenExpiry: (expiry) => {
      tokenExpiry = expiry;
    },
  });
  const service = serviceKey(client);
  if (saved && saved.baseUrl !== service) {
    await client.close();
    throw new OrgformError('PLAN_STALE', `The saved plan ${planFile} was made for ${saved.baseUrl}, not ${service}. Nothing was changed. Make a new plan against this service.`);
  }
  const statePath = statePathFor(flags, desired, io);
  const lock = await acquireLock(statePath, `orgform apply${planFile ? ` ${planFile}` : ''}`).catch(async (err: unknown) => {
    await client.close();
    throw err;
  });
  const color = useColor(flags, io);
  try {
    if (lock.replaced) {
      io.stderr.write(`Took over a stale lock on ${statePath} left by pid ${lock.replaced.pid} (no longer running).\n`);
    }
    await Journal.removeOrphanTempFiles(statePath);
    const journal = await Journal.read(statePath);
    const { makePlan } = await import('../../plan/make-plan.js');
    const fresh = await makePlan(selected, { client, journal, service, parallelism: flags.parallelism });
    let plan = fresh.plan;

    if (saved) {
      const reasons = findStale(saved.plan, saved.configFiles, {
        organisations: fresh.observed.organisations,
        activeId: fresh.observed.activeId,
        problems: fresh.observed.problems,
        fileHashes: await hashFiles(saved.configFiles.map((f) => f.path), io.cwd),
        baseUrl: service,
      });
      if (reasons.length > 0) {
        throw new OrgformError('PLAN_STALE', `The saved plan ${planFile} is stale: what it was based on changed. Nothing was changed. Run orgform plan again.`, {
          details: reasons,
        });
      }
      plan = saved.plan;
    } else if (flags.format === 'text' || !flags.autoApprove) {
      // In a log, a long plan is a digest (counts, the first changes, where to see them all): it is
      // the apply's record, not its review, and the whole would bury the apply's own output.
      const { COMPACT_THRESHOLD } = await import('../../render/compact-threshold.js');
      const text =
        human.isTTY !== true && plan.changes.length > COMPACT_THRESHOLD
          ? (await import('../../render/render-plan-digest.js')).renderPlanDigest(plan, { color: false })
          : await renderPlan(plan, 'text', color && human.isTTY === true);
      human.write(await pipeline.planSection(plan, text));
    }

    if (plan.problems.length > 0) {
      await pipeline.annotate((await import('../../render/findings.js')).planFindings(plan, selected), human);
      throw new OrgformError('PLAN_UNSAFE', `${plan.problems.length} organisation${plan.problems.length === 1 ? '' : 's'} could not be read, so the plan is incomplete. Nothing was changed. Fix the problems above (or leave those organisations out with --target), then run apply again.`, {
        details: plan.problems.map((p) => p.message),
      });
    }
    if (plan.changes.length === 0) {
      await pipeline.appendStepSummary(async () => (await import('../../render/render-step-summary.js')).renderApplyStepSummary(NOTHING_APPLIED), human);
      if (flags.format === 'json') {
        // The same events, with the same whole summary, as any other apply: pipelines read them alike.
        const { formatApplyEventJson } = await import('../../render/render-apply-json.js');
        const at = io.now();
        const summary = { total: 0, applied: 0, alreadyDone: 0, skipped: 0, notStarted: 0, failed: 0, interrupted: false, elapsedMs: 0, results: [] };
        io.stdout.write(formatApplyEventJson({ type: 'apply-start', total: 0, parallelism: flags.parallelism, at }) + '\n');
        io.stdout.write(formatApplyEventJson({ type: 'apply-end', at, summary }) + '\n');
      }
      else if (saved) io.stdout.write('No changes. Your organisations match the configuration.\n');
      return 0;
    }
    const overBudget = checkChangeBudget(plan, flags.maxChanges);
    if (overBudget) throw overBudget;
    if (flags.maxChanges !== undefined && flags.format === 'text') io.stdout.write(describeChangeBudget(plan, flags.maxChanges));
    if (tokenExpiry) {
      // A fixed JWT that runs out part way fails what is left with 401s: say so before starting.
      const { ASSUMED_RPS, tokenExpiryWarning } = await import('../token-expiry-warning.js');
      const warning = tokenExpiryWarning({ expiresAt: tokenExpiry.expiresAt, now: io.now(), changes: plan.changes.length, rps: client.rateStatus().rps ?? ASSUMED_RPS });
      if (warning) io.stderr.write(`${warning}\n`);
    }
    if (!saved && !flags.autoApprove) {
      const answer = await readAnswer(`\nDo you want to perform these ${plan.changes.length} changes?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: `, io, human);
      if (answer !== 'yes') {
        human.write('\nApply cancelled. Nothing was changed.\n');
        return 1;
      }
    }

    const summary = await runApplyWithProgress(plan, {
      format: flags.format,
      parallelism: flags.parallelism,
      io,
      client,
      journal,
      service,
      color,
      retries,
      pipeline,
      backoffBaseMs: retryBaseMs(io),
      ...(progressIntervalMs === undefined ? {} : { progressIntervalMs }),
      requestRate: () => client.rateStatus().rps,
      stop: stopper.signal,
    });
    if (halted) {
      const { formatError } = await import('../format-error.js');
      io.stderr.write(formatError(halted));
    }
    await pipeline.appendStepSummary(async () => (await import('../../render/render-step-summary.js')).renderApplyStepSummary(summary), human);
    return summary.failed > 0 || summary.interrupted || summary.notStarted > 0 ? 1 : 0;
  } finally {
    await lock.release();
    await client.close();
  }
}
