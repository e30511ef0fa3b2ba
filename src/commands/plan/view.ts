/**
 * What plan's flow tells the reader: the plan in the format asked for (text, the JSON document,
 * Markdown, the page), the change budget under a text plan, where a saved plan went, and whether the
 * plan is over budget. The document formats keep standard output to the document alone; views/ci-plan-view.ts wraps the
 * view for CI (annotations, the job summary, report files).
 */
import type { DesiredState } from '../../model/desired-state.js';
import type { ConfigProblem } from '../../model/config-problem.js';
import type { PlanHazard, PlanSafety } from '../../plan/check-plan-safety.js';
import type { Plan } from '../../plan/types.js';
import type { SavedPlan } from '../../plan/saved-plan.js';
import { terminalSafe } from '../../text/ansi.js';
import { PLAIN_FRAME, type LogFrame, type TextSink } from '../../text/log-frame.js';
import { describeChangeBudget, describeOverBudget, planHeadline } from '../../text/plan/plan-headline.js';
import { renderJson, renderJsonPieces } from '../../text/plan/render-json.js';
import { DEFAULT_GROUPED_MARKDOWN_LENGTH, GITLAB_GROUPED_MARKDOWN_LENGTH, renderGroupedMarkdown } from '../../text/plan/render-grouped-markdown.js';
import { withDigestFooter } from '../../text/plan/describe-digest.js';
import { describeBadLinkTarget } from '../../text/markdown-escape.js';
import { UsageError } from '../../errors.js';
import { renderPlanPage } from '../../text/plan/render-plan-page.js';
import { renderText, renderTextPieces } from '../../text/plan/render-text.js';
import { shellWord } from '../../text/describe-files.js';
import { formatWait } from '../../text/format-wait.js';
import type { ClientEvent } from '../../api/connect/open-client.js';
import type { EventSink } from '../../model/event-sink.js';

/** Everything of the run, from Connect on, reaches the view as an event: it shows the waits (retries and rate changes are apply's to show). */
export interface PlanView extends EventSink<ClientEvent> {
  /** The configuration has problems; the error that follows lists them (CI annotates them). */
  configRejected?(problems: readonly ConfigProblem[]): Promise<void>;
  /** The plan, with what its checks found (the budget is shown under a text plan). */
  planMade(plan: Plan, safety: PlanSafety): Promise<void>;
  /** The plan was saved for `orgform apply FILE`. */
  planSaved(path: string): void;
  /** The end of the run: what stands in the way of applying this plan (CI also annotates and summarises). */
  planChecked(plan: Plan, hazards: readonly PlanHazard[], desired: DesiredState): Promise<void>;
}

/** Text for people, the versioned JSON document for pipelines, Markdown for pull requests, the page (HTML) for reviewing a bulk plan. */
export type PlanFormat = 'text' | 'json' | 'markdown' | 'html';

/** How the Markdown comment is made: the plan page's address (its links), and the forge's length limit. */
export interface CommentOptions {
  pageUrl?: string;
  maxLength?: number;
}

/**
 * The comment's options from --page-url (checked before anything is read: a usage error) and the
 * CI service (CiSettings' `gitlabCi`): in GitLab CI the comment is a merge request note, whose limit is GitLab's.
 */
export function commentOptions(flags: { pageUrl?: string }, ci: { gitlabCi: boolean }): CommentOptions {
  const bad = flags.pageUrl === undefined ? undefined : describeBadLinkTarget(flags.pageUrl);
  if (bad !== undefined) throw new UsageError(`--page-url: ${bad}. Give the address the plan page (--format html) will have, such as the CI job's artifact URL.`);
  return { ...(flags.pageUrl === undefined ? {} : { pageUrl: flags.pageUrl }), ...(ci.gitlabCi ? { maxLength: GITLAB_GROUPED_MARKDOWN_LENGTH } : {}) };
}

export interface PlanViewOptions {
  format: PlanFormat;
  /** Standard output: the plan (for json, markdown and html, nothing else). */
  out: TextSink;
  /** Standard error. */
  err: TextSink;
  color: boolean;
  frame?: LogFrame;
  comment?: CommentOptions;
}

export function createPlanView(options: PlanViewOptions): PlanView {
  const { format, out, err } = options;
  const frame = options.frame ?? PLAIN_FRAME;
  return {
    async planMade(plan, safety) {
      if (format === 'text' && frame === PLAIN_FRAME) {
        // Written as it is rendered: a large plan's text is never held whole.
        for (const piece of renderTextPieces(plan, { color: options.color })) out.write(piece);
      } else if (format === 'json') {
        for (const piece of renderJsonPieces(plan)) out.write(piece);
        return;
      } else {
        const rendered = renderPlan(plan, format, { color: options.color, safety, ...options.comment });
        if (format !== 'text') {
          out.write(rendered);
          return;
        }
        out.write(frame.fold(planHeadline(plan), rendered));
      }
      if (safety.budget !== undefined) out.write(describeChangeBudget(safety.budget));
    },
    event(event) {
      // A wait of 2 s (the service, its rate limit, the token command, the state): on standard
      // error, whatever the format, for standard output holds the plan.
      if (event.type === 'wait') err.write(`${frame.guard(formatWait(event))}\n`);
    },
    planSaved(path) {
      err.write(`Saved the plan to ${path}. Apply exactly these changes with: orgform apply ${shellWord(path)}\n`);
    },
    async planChecked(_plan, hazards) {
      // Problems are shown in the plan itself; being over budget is the one error of a plan that was made.
      for (const hazard of hazards) {
        if (hazard.kind === 'over-budget') err.write(`Error: ${describeOverBudget(hazard, { nothingChanged: false })}\n`);
      }
    },
  };
}

/** What `orgform show` says of a saved plan under it: where it comes from, and what apply does with it. */
export function describeSavedPlan(saved: Pick<SavedPlan, 'createdAt' | 'baseUrl' | 'configFiles'>, path: string): string {
  const files = saved.configFiles.map((f) => f.path).join(', ');
  return (
    terminalSafe(`Saved ${saved.createdAt} for ${saved.baseUrl} from ${files === '' ? 'no config file' : files}.`) +
    ` orgform apply ${terminalSafe(shellWord(path))} reads the service again first, and refuses the plan if anything it was based on has changed.\n`
  );
}

export interface RenderPlanOptions extends CommentOptions {
  color: boolean;
  /** What the plan's checks found: the page marks the changes of a stale saved plan. */
  safety?: PlanSafety;
}

/** A plan in the format asked for. (The plan as apply shows it is text/plan/render-plan-for-review.ts.) */
export function renderPlan(plan: Plan, format: PlanFormat, options: RenderPlanOptions): string {
  switch (format) {
    case 'json':
      return renderJson(plan);
    case 'markdown':
      // The digest's footer ends it: pipelines read the marker on its last line.
      return withDigestFooter(plan, (p, { maxLength }) => renderGroupedMarkdown(p, { ...(options.pageUrl === undefined ? {} : { pageUrl: options.pageUrl }), maxLength }), options.maxLength ?? DEFAULT_GROUPED_MARKDOWN_LENGTH);
    case 'html':
      return renderPlanPage(plan, options.safety === undefined ? {} : { safety: options.safety });
    case 'text':
      return renderText(plan, { color: options.color });
    default: {
      const unreachable: never = format;
      throw new Error(`unknown format ${String(unreachable)}`);
    }
  }
}
