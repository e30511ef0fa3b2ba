import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { applyInputs, confirmationFor, exitCodeFor, freshness, type ApplyFlags } from '../../../src/commands/apply/command.js';
import { readSettings } from '../../../src/cli/settings.js';
import type { CliIO } from '../../../src/cli-io.js';
import { OrgformError, UsageError } from '../../../src/errors.js';
import { makeSummary, result } from '../../support/plan-fixtures.js';

const flags: ApplyFlags = { parallelism: 10, format: 'text' };
/** apply's settings, read from `env` as the command line reads them. */
const applySettings = (env: Record<string, string>) => readSettings(env, {}, ['apply', 'planKey']);
const progressIntervalFromEnv = (env: Record<string, string>) => applySettings(env).apply.progressIntervalMs;
const freshnessFromEnv = (env: Record<string, string>) => freshness(applySettings(env));

describe('apply: flags to the flow’s inputs', () => {
  it('takes a fresh plan’s files, targets, shard, state, budget and approval as given', () => {
    expect(applyInputs({ ...flags, file: ['a.yaml'], target: ['acme'], shard: '1/2', state: 's.json', maxChanges: 5, autoApprove: true }, [], 25)).toEqual({
      selection: { files: ['a.yaml'], targets: ['acme'], shard: '1/2' },
      state: 's.json',
      parallelism: 10,
      maxChanges: 5,
      autoApprove: true,
      backoffBaseMs: 25,
    });
  });

  it('needs approval unless --auto-approve, and reads ./orgs.yaml when no file is named', () => {
    expect(applyInputs(flags, [])).toEqual({ selection: { files: [], targets: [] }, parallelism: 10, autoApprove: false });
  });

  it('takes a saved plan, and refuses the files, targets or shard it already fixes', () => {
    expect(applyInputs(flags, ['plan.json']).planFile).toBe('plan.json');
    for (const extra of [{ file: ['a.yaml'] }, { target: ['acme'] }, { shard: '1/2' }]) {
      expect(() => applyInputs({ ...flags, ...extra }, ['plan.json'])).toThrow(UsageError);
    }
  });

  it('reads ORGFORM_PROGRESS_INTERVAL_MS as whole milliseconds of at least 10', () => {
    expect(progressIntervalFromEnv({})).toBeUndefined();
    expect(progressIntervalFromEnv({ ORGFORM_PROGRESS_INTERVAL_MS: '' })).toBeUndefined();
    expect(progressIntervalFromEnv({ ORGFORM_PROGRESS_INTERVAL_MS: '250' })).toBe(250);
    for (const bad of ['5s', '9', '-1', '1.5']) expect(() => progressIntervalFromEnv({ ORGFORM_PROGRESS_INTERVAL_MS: bad })).toThrow(/whole number from 10 to 3600000/);
  });

  it('reads ORGFORM_READ_MAX_AGE_MS as whole milliseconds from 0 to 60,000, and ORGFORM_PLAN_KEY of at least 32 characters', () => {
    expect(freshnessFromEnv({})).toEqual({});
    expect(freshnessFromEnv({ ORGFORM_READ_MAX_AGE_MS: '0' })).toEqual({ maxReadAgeMs: 0 });
    expect(freshnessFromEnv({ ORGFORM_READ_MAX_AGE_MS: '60000', ORGFORM_PLAN_KEY: 'k'.repeat(32) })).toEqual({ maxReadAgeMs: 60_000, planKey: 'k'.repeat(32) });
    expect(() => freshnessFromEnv({ ORGFORM_READ_MAX_AGE_MS: '60001' })).toThrow('ORGFORM_READ_MAX_AGE_MS must be a whole number from 0 to 60000 (got "60001").');
    for (const bad of ['5s', '-1', '1.5']) expect(() => freshnessFromEnv({ ORGFORM_READ_MAX_AGE_MS: bad })).toThrow(UsageError);
    expect(() => freshnessFromEnv({ ORGFORM_PLAN_KEY: 'k'.repeat(31) })).toThrow('ORGFORM_PLAN_KEY must be at least 32 characters long (it has 31)');
  });
});

describe('apply: who can answer the question', () => {
  const io = (stdinTTY: boolean) => ({ stdin: Object.assign(new PassThrough(), { isTTY: stdinTTY }), signal: new AbortController().signal }) as unknown as CliIO;

  it('no one without a terminal on standard input, or when the question would not reach one', () => {
    expect(confirmationFor(io(false), { write: () => true, isTTY: true })).toEqual({ unavailable: 'standard input is not a terminal' });
    expect(confirmationFor(io(true), { write: () => true, isTTY: false })).toEqual({ unavailable: 'the question would not reach a terminal (output is redirected)' });
  });

  it('someone at a terminal, who approves with yes and nothing else', async () => {
    let asked = '';
    for (const [typed, approved] of [['yes\n', true], ['y\n', false], ['YES\n', false]] as const) {
      const terminal = io(true);
      const confirmation = confirmationFor(terminal, { write: (s: string) => ((asked = s), true), isTTY: true });
      if (!('ask' in confirmation)) throw new Error('expected a question');
      const answer = confirmation.ask(3);
      (terminal.stdin as PassThrough).end(typed);
      expect(await answer).toBe(approved);
    }
    expect(asked).toContain('Do you want to perform these 3 changes?');
  });
});

describe('apply: the outcome as an exit code', () => {
  it('is 0 when every change was applied or already done, or there was nothing to do', () => {
    expect(exitCodeFor({ kind: 'applied', summary: makeSummary([result({ outcome: 'applied' }), result({ outcome: 'already-done' })]) })).toBe(0);
    expect(exitCodeFor({ kind: 'applied', summary: makeSummary([]) })).toBe(0);
  });

  it('is 1 when anything failed, was stale, was left undone or interrupted, or the answer was not yes', () => {
    expect(exitCodeFor({ kind: 'applied', summary: makeSummary([result({ outcome: 'failed' })]) })).toBe(1);
    expect(exitCodeFor({ kind: 'applied', summary: makeSummary([result({ outcome: 'not-started' })]) })).toBe(1);
    expect(exitCodeFor({ kind: 'applied', summary: makeSummary([result({ outcome: 'applied' }), result({ outcome: 'stale' })]) })).toBe(1);
    expect(exitCodeFor({ kind: 'applied', summary: makeSummary([], { interrupted: true }) })).toBe(1);
    expect(exitCodeFor({ kind: 'cancelled' })).toBe(1);
  });

  it('throws a refusal as the error main shows (exit 1)', () => {
    expect(() => exitCodeFor({ kind: 'refused', refusal: { kind: 'stale', changed: ['x'] }, planFile: 'p.json' })).toThrow(OrgformError);
    expect(() => exitCodeFor({ kind: 'refused', refusal: { kind: 'stale', changed: ['x'] }, planFile: 'p.json' })).toThrow('The saved plan p.json is stale');
  });
});
