// The bench's load cases: `orgform validate` on files whose cost is in reading them, not in the
// service (issue 25: loading in linear time, and interruptible), each run as the built CLI:
//
//   one billing anchor used 10,000 times (a bulk file that shares it)        goal: under 2 s
//   4 MiB (the size cap), one billing anchor shared by every organisation   goal: seconds
//   4 MiB, aliases expanding it to just under the limit (10 nodes and 10
//     characters of text a character), every repeated value wrong:
//     numbers where ids belong, and the same ids under every organisation  goal: seconds
//   4 MiB without aliases, read by the yaml package: the reference
//   SIGINT once validate of the 4 MiB file is parsing: time to exit        goal: under 1 s
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, processCpuMs, runOrgform, track } from './processes.mjs';
import { summarise } from './goal-cases.mjs';

export const LOAD_SETTINGS = {
  sharedAnchorUses: 10_000,
  fileChars: 4 * 1024 * 1024 - 4096,
  /** EXPANDED_NODES_PER_CHAR and EXPANDED_CHARS_PER_CHAR in src/config/alias-expansion.ts are 10: the worst cases stay just under them. */
  expansionPerChar: 9.5,
  sharedListLength: 1_000,
  maxAnchorMs: 2_000,
  maxLoadMs: 10_000,
  maxInterruptMs: 1_000,
  /** SIGINT once the process has used this much CPU: past its start (about 150 ms), into the parse. */
  interruptAfterCpuMs: 600,
  timeoutMs: 600_000,
};

const billingOrg = (i) => [`  org-${i}:`, '    billing:', `      billingEmail: "billing+${i}@example.com"`, `      customerID: 'cus_${i}'`];
const chars = (lines) => lines.reduce((n, l) => n + l.length + 1, 0);

/** Organisations with billing of their own (9 nodes each), up to `budget` characters. */
function fill(lines, from, budget) {
  for (let i = from, used = 0; ; i++) {
    const org = billingOrg(i);
    used += chars(org);
    if (used > budget) return;
    lines.push(...org);
  }
}

/** Writes the case files into `dir`; returns their paths. */
export function writeLoadFixtures(dir) {
  const s = LOAD_SETTINGS;
  const write = (name, lines) => {
    const file = join(dir, name);
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  const anchor = ['version: 1', 'organisations:', '  org-0:', '    billing: &billing', '      billingEmail: billing@example.com', '      customerID: cus_shared', '      platformID: plat_shared'];
  for (let i = 1; i < s.sharedAnchorUses; i++) anchor.push(`  org-${i}:`, '    billing: *billing');

  const billing = ['version: 1', 'organisations:', '  org-0:', '    billing: &billing', '      billingEmail: billing@example.com', '      customerID: cus_shared'];
  for (let i = 1; chars(billing) < s.fileChars - 40; i++) billing.push(`  org-${i}:`, '    billing: *billing');

  // A shared list of K items used by M organisations expands to about M × (K + 5) nodes and
  // M × (the list's characters + a use's keys) characters of text: M is the most that keeps both
  // within expansionPerChar over the whole file (the alias-bomb limit counts both; the characters
  // bind first), and the rest of the file is ordinary organisations (about a node per 10
  // characters, fewer characters of text than its length).
  const worst = (item) => {
    const K = s.sharedListLength;
    const items = Array.from({ length: K }, (_, i) => item(i));
    const lines = ['version: 1', 'organisations:', '  org-0:', '    invitations:', `      revoke: &list [${items.join(', ')}]`];
    const useChars = items.reduce((n, text) => n + text.length, 0) + 'shared-NNNNN'.length + 'invitations'.length + 'revoke'.length;
    const budget = s.expansionPerChar * s.fileChars;
    const M = Math.floor(Math.min((budget - s.fileChars / 10) / (K + 5), (budget - s.fileChars) / useChars));
    for (let i = 1; i <= M; i++) lines.push(`  shared-${i}: {invitations: {revoke: *list}}`);
    fill(lines, 1, s.fileChars - chars(lines));
    return lines;
  };

  const plain = ['%YAML 1.2', '---', 'version: 1', 'organisations:'];
  fill(plain, 0, s.fileChars - chars(plain));

  return {
    anchor: write('load-anchor-10000.yaml', anchor),
    billing: write('load-4mib-shared-billing.yaml', billing),
    numbers: write('load-4mib-worst-numbers.yaml', worst((i) => String(i))),
    duplicates: write('load-4mib-worst-duplicates.yaml', worst((i) => `inv_${i}`)),
    plain: write('load-4mib-plain.yaml', plain),
  };
}

/** `orgform validate -f FILE`, `rounds` times; checks that it read the file as expected. */
async function validateCase(ctx, rounds, { name, file, expect }) {
  const runs = [];
  for (let r = 1; r <= rounds; r += 1) {
    ctx.log(`bench: load: ${name} (${r}/${rounds})...`);
    const run = await runOrgform(['validate', '-f', file], { cwd: ctx.tmp, env: ctx.baseEnv(), timeoutMs: LOAD_SETTINGS.timeoutMs, ...ctx.files(`load-${r}`) });
    if (run.timedOut) throw new Error(`${name}: still running after ${LOAD_SETTINGS.timeoutMs / 1000} s, stopped`);
    if (!expect(run)) throw ctx.fail(`orgform validate (${name})`, run);
    runs.push({ wallMs: run.wallMs, cpuMs: run.cpuMs, peakRssMB: run.peakRssKB / 1024, exitCode: run.code });
  }
  return { case: `load: ${name}`, kind: 'load', runs, ...summarise(runs, ['wallMs', 'cpuMs', 'peakRssMB']) };
}

/** Validate of `file`, interrupted once it is parsing: from SIGINT to the process's exit. */
function interruptOnce(ctx, file, label) {
  const s = LOAD_SETTINGS;
  const { outFile, errFile } = ctx.files(label);
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, [BIN, 'validate', '-f', file], { cwd: ctx.tmp, env: ctx.baseEnv(), stdio: 'ignore' }));
    let signalledAt;
    const killer = setTimeout(() => child.kill('SIGKILL'), s.timeoutMs);
    const poll = setInterval(() => {
      if (signalledAt !== undefined) return;
      const cpu = processCpuMs(child.pid);
      if (cpu === undefined || cpu < s.interruptAfterCpuMs) return;
      signalledAt = process.hrtime.bigint();
      child.kill('SIGINT');
    }, 5);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const exitedAt = process.hrtime.bigint();
      clearInterval(poll);
      clearTimeout(killer);
      writeFileSync(outFile, '');
      writeFileSync(errFile, `exit ${code ?? signal}\n`);
      if (signalledAt === undefined) reject(new Error(`${label}: validate ended (${code ?? signal}) before it could be interrupted`));
      else resolve({ interruptMs: Number(exitedAt - signalledAt) / 1e6, code, signal });
    });
  });
}

export async function loadCases(ctx, rounds) {
  const s = LOAD_SETTINGS;
  ctx.log('bench: load: writing the files...');
  const files = writeLoadFixtures(ctx.tmp);
  const valid = (n) => (run) => run.code === 0 && run.stdout.startsWith(`Valid: ${n === undefined ? '' : `${n} organisations`}`);
  // Refused for what is wrong in it, read in full: not as an alias bomb.
  const refused = (problem) => (run) => run.code === 1 && run.stderr.includes(problem) && !run.stderr.includes('alias bomb');
  const out = [];
  out.push(await validateCase(ctx, rounds, { name: `one anchor used ${s.sharedAnchorUses.toLocaleString('en-US')} times`, file: files.anchor, expect: valid(s.sharedAnchorUses) }));
  out.push(await validateCase(ctx, rounds, { name: '4 MiB, one billing anchor shared by every organisation', file: files.billing, expect: valid() }));
  out.push(await validateCase(ctx, rounds, { name: `4 MiB, aliases just under the limit (${s.expansionPerChar} a character), numbers where ids belong`, file: files.numbers, expect: refused('would be read as a number') }));
  out.push(await validateCase(ctx, rounds, { name: `4 MiB, aliases just under the limit (${s.expansionPerChar} a character), the same ids under every organisation`, file: files.duplicates, expect: refused('has it through this alias') }));
  out.push(await validateCase(ctx, rounds, { name: '4 MiB without aliases, yaml package (reference)', file: files.plain, expect: valid() }));
  const interrupts = [];
  for (let r = 1; r <= rounds; r += 1) {
    ctx.log(`bench: load: SIGINT during validate of 4 MiB (${r}/${rounds})...`);
    interrupts.push(await interruptOnce(ctx, files.billing, `load-interrupt-${r}`));
  }
  out.push({ case: 'load: SIGINT while validate parses 4 MiB', kind: 'load-interrupt', runs: interrupts, ...summarise(interrupts, ['interruptMs']) });
  return out;
}

export function loadGoals(cases) {
  const s = LOAD_SETTINGS;
  const out = [];
  for (const c of cases) {
    const worst = c.stats?.wallMs?.max;
    if (c.kind === 'load' && c.case.includes('anchor used')) out.push({ goal: `${c.case}: < ${s.maxAnchorMs} ms (every run)`, value: worst, ok: worst < s.maxAnchorMs });
    else if (c.kind === 'load' && c.case.includes('4 MiB')) out.push({ goal: `${c.case}: < ${s.maxLoadMs / 1000} s (every run)`, value: worst, ok: worst < s.maxLoadMs });
    if (c.kind === 'load-interrupt') {
      const slowest = c.stats.interruptMs.max;
      out.push({ goal: `load: exit within ${s.maxInterruptMs} ms of SIGINT while parsing (every run)`, value: slowest, ok: slowest < s.maxInterruptMs });
    }
  }
  return out;
}
