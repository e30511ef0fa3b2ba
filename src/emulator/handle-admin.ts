/**
 * The out-of-process controls under /__emulator/ (no auth; not part of the service interface):
 * counters, fault rules (and the release of the requests a hold holds), a state dump, the behaviour played, fresh tokens, an invitation made
 * pending again, and billing changed by someone else (a concurrent writer), for benchmarks, CLI
 * tests and token commands.
 */
import type { Behaviour } from './behaviour.js';
import type { EmulatorCounters } from './counters.js';
import { type FaultRule, parseFaultRule } from './faults.js';
import { jsonAnswer, noContent, statusErrorAnswer, type Answer } from './http-answer.js';
import type { EmulatorStore } from './store.js';

export const ADMIN_PREFIX = '/__emulator/';

export interface AdminTarget {
  store: EmulatorStore;
  counters: EmulatorCounters;
  faults: { add(rule: FaultRule): void; clear(): void; pending(): FaultRule[] };
  resetCounters(): void;
  /** Lets the requests a hold fault holds go on; how many there were. */
  release(): number;
  behaviour: Readonly<Behaviour>;
  /** A fresh token for the user named by a token or an e-mail address (default the first user); undefined when none. */
  issueToken(user?: string): string | undefined;
}

export function handleAdmin(target: AdminTarget, method: string, path: string, body: Buffer): Answer {
  const route = `${method} ${path.slice(ADMIN_PREFIX.length)}`;
  switch (route) {
    case 'GET counters':
      return jsonAnswer(200, target.counters);
    case 'POST counters/reset':
      target.resetCounters();
      return noContent();
    case 'GET faults':
      return jsonAnswer(200, target.faults.pending().map(showInfinity));
    case 'POST faults':
      return addFaults(target, body);
    case 'DELETE faults':
      target.faults.clear();
      return noContent();
    case 'POST release':
      return jsonAnswer(200, { released: target.release() });
    case 'GET state':
      return jsonAnswer(200, target.store.dump());
    case 'GET behaviour':
      return jsonAnswer(200, target.behaviour);
    case 'POST tokens':
      return issueToken(target, body);
    case 'POST invitations/reopen':
      return reopenInvitation(target, body);
    case 'POST billing':
      return changeBilling(target, body);
    default:
      return statusErrorAnswer(404, `No emulator control at ${method} ${path}.`);
  }
}

function addFaults(target: AdminTarget, body: Buffer): Answer {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return statusErrorAnswer(400, 'The body must be a fault rule or an array of them, as JSON.');
  }
  const rules: FaultRule[] = [];
  for (const item of Array.isArray(value) ? value : [value]) {
    const rule = parseFaultRule(item);
    if (typeof rule === 'string') return statusErrorAnswer(400, `Invalid fault rule: ${rule}.`);
    rules.push(rule);
  }
  // All or nothing: a bad rule in an array adds none of them.
  for (const rule of rules) target.faults.add(rule);
  return jsonAnswer(200, { pending: target.faults.pending().length });
}

/** Body: nothing, or {"user": "<a token or an e-mail address>"}; answers {"token": "..."}. */
function issueToken(target: AdminTarget, body: Buffer): Answer {
  let user: string | undefined;
  const text = body.toString('utf8').trim();
  if (text !== '') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return statusErrorAnswer(400, 'The body must be empty or a JSON object such as {"user": "ada@acme.example"}.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return statusErrorAnswer(400, 'The body must be empty or a JSON object such as {"user": "ada@acme.example"}.');
    }
    const given = (value as Record<string, unknown>).user;
    if (given !== undefined && typeof given !== 'string') return statusErrorAnswer(400, '"user" must be a token or an e-mail address.');
    user = given;
  }
  const token = target.issueToken(user);
  if (token === undefined) {
    return statusErrorAnswer(404, user === undefined ? 'The emulator has no users.' : 'No user has this token or e-mail address.');
  }
  return jsonAnswer(200, { token });
}

/**
 * Body: {"invitation": "<id>"}. The invitation accepted earlier is pending again and its invitee is
 * no longer a member of the organisation; answers {"organisationId", "removedFrom": [e-mails]}.
 */
function reopenInvitation(target: AdminTarget, body: Buffer): Answer {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    value = undefined;
  }
  const id = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).invitation : undefined;
  if (typeof id !== 'string') return statusErrorAnswer(400, 'The body must be a JSON object such as {"invitation": "inv_globex_ada"}.');
  const reopened = target.store.reopenInvitation(id);
  if (reopened === undefined) return statusErrorAnswer(404, 'No invitation has this identifier (a deleted one cannot be reopened).');
  return jsonAnswer(200, reopened);
}

const CHANGE_BILLING_FORM = 'The body must be a JSON object such as {"organisation": "org_acme", "billing": {"subscriptionId": "sub_2", "billingEmail": null}} (null removes a field).';

/**
 * Body: {"organisation": "<id>", "billing": {field: value or null}}, fields in the response spelling:
 * someone else changes the billing, as a billing system renewing a subscription does. Answers the organisation.
 */
function changeBilling(target: AdminTarget, body: Buffer): Answer {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return statusErrorAnswer(400, CHANGE_BILLING_FORM);
  }
  const request = value as { organisation?: unknown; billing?: unknown } | null;
  if (typeof request !== 'object' || request === null || typeof request.organisation !== 'string') return statusErrorAnswer(400, CHANGE_BILLING_FORM);
  const billing = request.billing;
  if (typeof billing !== 'object' || billing === null || Array.isArray(billing)) return statusErrorAnswer(400, CHANGE_BILLING_FORM);
  const org = target.store.changeBilling(request.organisation, billing as Record<string, unknown>);
  if (org === undefined) return statusErrorAnswer(404, `No organisation has the id ${JSON.stringify(request.organisation)}.`);
  return jsonAnswer(200, org);
}

/** JSON has no Infinity; say it in words rather than as null. */
function showInfinity(rule: FaultRule): unknown {
  return rule.times === Infinity ? { ...rule, times: 'Infinity' } : rule;
}
