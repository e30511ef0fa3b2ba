#!/usr/bin/env node
// @ts-check
/**
 * The action's step after the plan page's upload: one line in the job summary that links the page
 * (the plan's own summary, written before the page had an address, names it without a link).
 * The address is the upload's own output, an http(s) URL of GitHub's; anything else is not linked.
 */
import { appendFileSync } from 'node:fs';
import { runStep } from './github-runner.mjs';

async function main() {
  const url = process.env.ORGFORM_PAGE_URL ?? '';
  const name = process.env.ORGFORM_PAGE_NAME ?? '';
  const summary = process.env.GITHUB_STEP_SUMMARY;
  if (!summary || !/^https:\/\/[\x21-\x7e]+$/.test(url) || /[()<>"'`\\]/.test(url) || !/^[\w.-]+$/.test(name)) return;
  appendFileSync(summary, `**The plan page:** [${name}](${url}) (every change by organisation, with filters; an artifact of this run: open plan.html from the download)\n\n`);
}

await runStep(main);
