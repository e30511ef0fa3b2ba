#!/usr/bin/env node
// @ts-check
/**
 * The action's step after the page's upload: one line in the job summary that links the page (the
 * plan page, or the apply report; the command's own summary was written before it had an address).
 * The address is the upload's own output, an http(s) URL of GitHub's; anything else is not linked.
 */
import { appendFileSync } from 'node:fs';
import { runStep } from './github-runner.mjs';

async function main() {
  const url = process.env.ORGFORM_PAGE_URL ?? '';
  const name = process.env.ORGFORM_PAGE_NAME ?? '';
  const summary = process.env.GITHUB_STEP_SUMMARY;
  if (!summary || !/^https:\/\/[\x21-\x7e]+$/.test(url) || /[()<>"'`\\]/.test(url) || !/^[\w.-]+$/.test(name)) return;
  const line =
    process.env.INPUT_COMMAND === 'apply'
      ? `**The apply report:** [${name}](${url}) (every change with its outcome, and the run over time; an artifact of this run: open apply.html from the download)`
      : `**The plan page:** [${name}](${url}) (every change by organisation, with filters; an artifact of this run: open plan.html from the download)`;
  appendFileSync(summary, `${line}\n\n`);
}

await runStep(main);
