/**
 * Every module in src/ has a test of its own (test/ mirrors src/: `src/a/b.ts` → `test/a/b.test.ts`
 * or `test/a/b.*.test.ts`), or a reason below why it needs none: types only, or tested whole
 * through the one module that uses it. A new module without either fails here; so does a reason
 * left behind for a module that is gone or has since got a test of its own.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const TYPES = 'types and interfaces only: nothing to run';
const EMULATOR = 'part of the emulator, tested through its HTTP answers (test/emulator/, conformance against the OpenAPI description)';
const CONFIG = 'part of loading orgs.yaml, tested through loadConfig (test/config/load-config, corpus, round-trip, schema-contract)';
const CLIENT = 'part of the client, tested through it (test/api/client*, open-answers; test/reliability/transport-faults, security)';
const TEXT_VIEW = 'a display of the text apply view, tested through it (test/commands/apply/views/text-apply-view.test.ts)';
const COMMAND = (e2e: string) => `a command’s wiring, tested end to end (${e2e})`;

const REASONS: Record<string, string> = {
  'api/api-error.ts': CLIENT,
  'api/dispatcher.ts': CLIENT,
  'api/http.ts': CLIENT,
  'api/read-body.ts': CLIENT,
  'api/read-jwt-expiry.ts': 'read by the token sources, tested there (test/api/token-source.test.ts)',
  'api/types.ts': 'the wire types; toBillingUpdate has test/api/to-billing-update.test.ts',
  'apply/events.ts': TYPES,
  'cli/commands/emulator.ts': COMMAND('test/emulator/emulator-command.test.ts'),
  'cli/commands/export.ts': COMMAND('test/e2e/export.test.ts, export-diff.test.ts'),
  'cli/commands/force-unlock.ts': COMMAND('test/state/lock.test.ts, test/reliability/process-faults.test.ts, test/e2e/remote-state.test.ts'),
  'cli/commands/state-list.ts': COMMAND('test/e2e/remote-state.test.ts'),
  'cli/commands/state-migrate.ts': COMMAND('test/e2e/remote-state.test.ts'),
  'cli/commands/state-pull.ts': COMMAND('test/e2e/remote-state.test.ts'),
  'cli/commands/show.ts': COMMAND('test/e2e/show.test.ts'),
  'cli/commands/slugs-check.ts': COMMAND('test/e2e/slugs.test.ts'),
  'cli/commands/validate.ts': COMMAND('test/config/validate-command.test.ts'),
  'engine/read-saved-plan.ts': 'read by apply and show, tested through them (test/e2e/show.test.ts, test/e2e/apply.test.ts, test/e2e/fresh-reads.test.ts)',
  'cli/connection.ts': 'read by openClient, tested through it and end to end (test/api/connect/open-client.test.ts, test/e2e/plan.test.ts, test/reliability/security.test.ts)',
  'cli/io.ts': TYPES,
  'cli/limit-heap-growth.ts': 'a V8 flag set for the process: its effect is peak memory, which `npm run bench` measures and tests never assert',
  'cli/parse-max-rps.ts': 'read by the grammar and openClient, tested end to end (test/e2e/rate-limit.test.ts)',
  'cli/program.ts': 'the grammar: every command test runs through it (test/support/run-cli.ts)',
  'cli/run-token-command.ts': 'run by openClient, tested end to end (test/e2e/token-command.test.ts)',
  'config/check-across-documents.ts': CONFIG,
  'config/declare-document.ts': CONFIG,
  'config/describe-bad-identifier.ts': CONFIG,
  'config/describe-hidden-character.ts': CONFIG,
  'config/describe-schema-error.ts': CONFIG,
  'config/describe-unquoted.ts': CONFIG,
  'config/format-problem.ts': CONFIG,
  'config/json-pointer.ts': CONFIG,
  'config/merge-billing.ts': CONFIG,
  'config/parse-source.ts': CONFIG,
  'config/parse-yaml.ts': 'the full YAML parser behind the fast one, tested against it (test/config/parse-yaml-fast.test.ts)',
  'config/read-tree.ts': CONFIG,
  'config/schema-validator.ts': CONFIG,
  'config/schema-walker.ts': CONFIG,
  'config/source-tree.ts': CONFIG,
  'config/types.ts': TYPES,
  'config/unique-messages.ts': CONFIG,
  'config/validate-config.ts': CONFIG,
  'config/value-at.ts': CONFIG,
  'emulator/act-out-fault.ts': EMULATOR,
  'emulator/behaviour.ts': 'the emulator’s points and profiles, tested through them (test/emulator/behaviour-points.test.ts, behaviour-profiles.test.ts)',
  'emulator/counters.ts': EMULATOR,
  'emulator/cursor-codec.ts': EMULATOR,
  'emulator/data.ts': EMULATOR,
  'emulator/failure.ts': EMULATOR,
  'emulator/generate-emulator-data.ts': EMULATOR,
  'emulator/handle-admin.ts': EMULATOR,
  'emulator/handle-operation.ts': EMULATOR,
  'emulator/handle-service-request.ts': EMULATOR,
  'emulator/http-answer.ts': EMULATOR,
  'emulator/paginate-organisations.ts': EMULATOR,
  'emulator/parse-billing-update.ts': EMULATOR,
  'emulator/read-request.ts': EMULATOR,
  'emulator/render-organisation.ts': EMULATOR,
  'emulator/routes.ts': EMULATOR,
  'emulator/server.ts': EMULATOR,
  'emulator/slug-rules.ts': EMULATOR,
  'emulator/store.ts': EMULATOR,
  'emulator/tokens.ts': EMULATOR,
  'emulator/user-listing.ts': EMULATOR,
  'engine/open-client.ts': TYPES,
  'engine/open-state-for.ts': 'the flows’ one call into state/open-state.ts, tested through them (test/commands/apply/flow.state.test.ts, test/e2e/remote-state.test.ts)',
  'errors.ts': 'the error classes, checked wherever they are thrown (their codes in test/commands/apply/refusal-error.test.ts, test/state/, test/plan/)',
  'export/format-yaml-string.ts': 'part of writing orgs.yaml, tested through it (test/export/render-export.test.ts, update-document.test.ts)',
  'export/parse-for-update.ts': 'part of updating orgs.yaml in place, tested through it (test/export/update-document.test.ts)',
  'export/read-organisations.ts': COMMAND('test/e2e/export.test.ts'),
  'export/safe-string-tags.ts': 'part of writing orgs.yaml, tested through it (test/export/render-export.test.ts)',
  'export/select-exportable.ts': 'part of export, tested through it (test/export/update-document.test.ts, test/e2e/export.test.ts)',
  'export/set-scalar-text.ts': 'part of updating orgs.yaml in place, tested through it (test/export/update-document.test.ts)',
  'model/change-kind.ts': 'the change kinds and their order, tested through addresses and the plan (test/model/address.test.ts, test/plan/compute-plan.test.ts)',
  'model/config-problem.ts': TYPES,
  'model/observed-organisation.ts': TYPES,
  'model/observed-state.ts': TYPES,
  'model/plan-problem.ts': TYPES,
  'plan/plan-organisation.ts': 'one organisation’s changes, the heart of computePlan: test/plan/compute-plan.test.ts covers every kind of change through it',
  'render/ansi.ts': 'colours and terminal-safe text, tested through the text views (test/plan-views/render-text.test.ts, render-apply.test.ts)',
  'render/apply-view.ts': 'the apply view’s interface; confirmQuestion is tested with the question (test/commands/apply/command.test.ts)',
  'render/change-lines-display.ts': TEXT_VIEW,
  'render/compact-threshold.ts': 'one constant',
  'render/findings.ts': 'the problems as CI shows them, tested through each CI format (test/ci/render-codequality.test.ts, test/commands/plan/views/ci-plan-view.test.ts)',
  'render/format-change-line.ts': 'one change on one line, tested through the compact plan and the digest (test/plan-views/render-text.test.ts, render-plan-digest.test.ts)',
  'render/format-value.ts': 'how values are spelled, tested through the text and Markdown views (test/render/)',
  'render/live-line-display.ts': TEXT_VIEW,
  'render/log-frame.ts': 'the frame’s interface and the plain frame; GitHub’s frame is tested in test/ci/pipeline-output.test.ts',
  'render/progress-display.ts': TEXT_VIEW,
  'render/progress-lines-display.ts': TEXT_VIEW,
  'render/render-apply-json.ts': 'the NDJSON events, tested with the other apply formats (test/commands/apply/views/render-apply.test.ts, ndjson-apply-view.test.ts)',
  'render/render-gitlab-terraform.ts': 'tested with the other GitLab report (test/ci/render-codequality.test.ts)',
  'render/workspace-path.ts': 'tested through the reports and annotations that use it (test/ci/render-codequality.test.ts, test/e2e/pipeline.test.ts)',
  'state/file-state.ts': 'the journal file and its lock behind the state interface, tested through every apply and plan that uses the default state (test/engine/, test/e2e/apply.test.ts) and state migrate (test/e2e/remote-state.test.ts)',
  'state/migrate-state.ts': 'state migrate, tested end to end across file and PostgreSQL (test/e2e/remote-state.test.ts)',
  'state/state-backend.ts': 'the state interface and its messages, tested through each backend (test/state/postgres-state.test.ts, http-state.test.ts)',
  'state/state-http.ts': 'the HTTP backend’s requests, tested through it (test/state/http-state.test.ts: redirects, refused credentials, an unreachable server, retries)',
  'state/read-observed-state.ts': 'the read step, tested through plans against the emulator under both profiles (test/e2e/plan.test.ts, open-points.test.ts) and the engines (test/engine/)',
};

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') ? [relative(join(ROOT, 'src'), path)] : [];
  });
}

function hasOwnTest(module: string): boolean {
  const dir = join(ROOT, 'test', dirname(module));
  const name = basename(module, '.ts');
  return existsSync(join(dir, `${name}.test.ts`)) || (existsSync(dir) && readdirSync(dir).some((f) => f.startsWith(`${name}.`) && f.endsWith('.test.ts')));
}

describe('the tests', () => {
  const all = modules(join(ROOT, 'src')).sort();

  it('test every module in src/ directly, or say why it needs no test of its own', () => {
    expect(all.filter((m) => !hasOwnTest(m) && REASONS[m] === undefined)).toEqual([]);
  });

  it('keep no reason for a module that is gone or has a test of its own now', () => {
    expect(Object.keys(REASONS).filter((m) => !all.includes(m) || hasOwnTest(m))).toEqual([]);
  });
});
