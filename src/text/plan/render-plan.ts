/**
 * A plan in the format asked for: text for people, the versioned JSON document for pipelines,
 * Markdown for pull requests. (The plan as apply shows it is render-plan-for-review.ts.)
 */
import type { Plan } from '../../plan/types.js';
import { renderJson } from './render-json.js';
import { renderMarkdown } from './render-markdown.js';
import { renderText } from './render-text.js';

export type PlanFormat = 'text' | 'json' | 'markdown';

export function renderPlan(plan: Plan, format: PlanFormat, color: boolean): string {
  switch (format) {
    case 'json':
      return renderJson(plan);
    case 'markdown':
      return renderMarkdown(plan);
    case 'text':
      return renderText(plan, { color });
    default: {
      const unreachable: never = format;
      throw new Error(`unknown format ${String(unreachable)}`);
    }
  }
}
