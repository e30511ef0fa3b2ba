/**
 * What an apply keeps of its own run, when something will show it: the timeline (for the job
 * summary's chart and the report page) and, with `--report html=FILE`, what the page needs. The
 * page is written at the end however the run ends (done, failed, interrupted, halted, refused, an
 * error part way), since a report of a run that went wrong is the one people need most; its path is
 * checked before anything is read, so that a path that cannot be written stops nothing half-way.
 */
import { resolve } from 'node:path';
import { isOrgformError } from '../../errors.js';
import { redactSecrets } from '../../redact.js';
import type { RunTimeline } from '../../model/run-timeline.js';
import { inspectTarget, writeFileAtomically, type UserFile } from '../../state/write-file-atomically.js';
import { findWorkTree } from '../../work-tree.js';
import type { ApplyOutcome } from './flow.js';
import type { ApplyView } from './view.js';
import { CANCELLED_TEXT } from './view.js';
import { ApplyReportRecord } from './views/apply-report-record.js';
import { refusalError } from './views/refusal-error.js';
import { TimelineFeed, type AttemptEvent } from './views/timeline-feed.js';

/** One `--report html=FILE`. */
export interface HtmlReportSpec {
  kind: 'html';
  path: string;
}

export interface RecordingOptions {
  cwd: string;
  now(): number;
  /** The --report html= files asked for. */
  pages: readonly HtmlReportSpec[];
  /** Whether anything else draws the timeline (the job summary). */
  timeline: boolean;
  /** The service as configured, for a report of a run that stopped before it connected. */
  baseUrl: string | undefined;
}

/** How the run ended, as the page says it: the flow's outcome, or the error it threw. */
export type RunEnding = { outcome: ApplyOutcome } | { error: unknown };

export class RunRecording {
  private readonly startedAt: number;
  private readonly feed: TimelineFeed | undefined;
  private readonly record: ApplyReportRecord | undefined;
  private serviceKey: string | undefined;

  private constructor(
    private readonly options: RecordingOptions,
    private readonly files: readonly UserFile[],
  ) {
    this.startedAt = options.now();
    this.feed = files.length > 0 || options.timeline ? new TimelineFeed(this.startedAt) : undefined;
    this.record = files.length > 0 ? new ApplyReportRecord() : undefined;
  }

  /** Checks each page's path now (in the working tree, a file that may be replaced): before anything is read or written. */
  static async open(options: RecordingOptions): Promise<RunRecording> {
    const tree = options.pages.length === 0 ? undefined : await findWorkTree(options.cwd);
    const files: UserFile[] = [];
    for (const page of options.pages) {
      const file = { shown: page.path, option: '--report', tree: tree! };
      await inspectTarget(resolve(options.cwd, page.path), file);
      files.push(file);
    }
    return new RunRecording(options, files);
  }

  /** The timeline so far, when one is recorded and apply has started. */
  timeline(): RunTimeline | undefined {
    return this.feed?.timeline(this.options.now());
  }

  /** `view`, with the run recorded from what it is told. */
  watch(view: ApplyView): ApplyView {
    const { feed, record } = this;
    if (feed === undefined && record === undefined) return view;
    return {
      ...view,
      applyStarting: (meter, run) => {
        this.serviceKey = run.serviceKey;
        feed?.metered(meter);
        record?.starting(run.changes);
        view.applyStarting(meter, run);
      },
      event: (event) => {
        feed?.event(event);
        record?.event(event);
        view.event(event);
      },
      ...(feed === undefined ? {} : { attempt: (event: AttemptEvent) => feed.event(event) }),
    };
  }

  /**
   * Writes the report pages, if asked for. After an error, a page that cannot be written is said
   * on `warn` and the error stands; otherwise it is the command's error, as for any file it was
   * asked to write.
   */
  async finish(ending: RunEnding, warn: (message: string) => void): Promise<void> {
    if (this.record === undefined) return;
    const report = this.record.report(this.options.now(), {
      baseUrl: this.serviceKey ?? this.options.baseUrl ?? '(no service set)',
      startedAt: this.startedAt,
      ...withTimeline(this.timeline()),
      ...withStopped(stoppedBy(ending)),
    });
    const { renderApplyReportPage } = await import('../../text/plan/render-apply-report-page.js');
    const text = renderApplyReportPage(report);
    for (const file of this.files) {
      try {
        await writeFileAtomically(resolve(this.options.cwd, file.shown), text, file);
      } catch (err) {
        if (!('error' in ending)) throw err;
        warn(`the report ${file.shown} was not written: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}

/** Why the run stopped before its end, in the words the command's error says it; undefined when it ended by itself or was interrupted. */
export function stoppedBy(ending: RunEnding): string | undefined {
  if ('error' in ending) return describeError(ending.error);
  const { outcome } = ending;
  switch (outcome.kind) {
    case 'applied':
      return outcome.halted === undefined ? undefined : describeError(outcome.halted);
    case 'cancelled':
      return CANCELLED_TEXT.trim();
    case 'refused':
      return describeError(refusalError(outcome.refusal, outcome.planFile));
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown apply outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Details shown after an error's message at most: the page's table and the log have the rest. */
const DETAILS_SHOWN = 10;

/** An error's message and its first details, on one line; credentials removed from what is not orgform's own error (its constructor did that). */
function describeError(error: unknown): string {
  if (!isOrgformError(error)) return redactSecrets(error instanceof Error ? error.message : String(error), []);
  const shown = error.details.slice(0, DETAILS_SHOWN);
  const more = error.details.length > shown.length ? `; …and ${error.details.length - shown.length} more` : '';
  return shown.length === 0 ? error.message : `${error.message} ${shown.join('; ')}${more}`;
}

function withTimeline(timeline: RunTimeline | undefined): { timeline?: RunTimeline } {
  return timeline === undefined ? {} : { timeline };
}

function withStopped(stopped: string | undefined): { stopped?: string } {
  return stopped === undefined ? {} : { stopped };
}
