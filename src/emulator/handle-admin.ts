/**
 * The out-of-process controls under /__emulator/ (no auth; not part of the service interface):
 * counters, fault rules and a state dump, for benchmarks and CLI tests.
 */
import type { EmulatorCounters } from './counters.js';
import type { FaultRule } from './faults.js';
import { parseFaultRule } from './faults.js';
import { jsonAnswer, noContent, statusErrorAnswer, type Answer } from './http-answer.js';
import type { EmulatorStore } from './store.js';

export const ADMIN_PREFIX = '/__emulator/';

export interface AdminTarget {
  store: EmulatorStore;
  counters: EmulatorCounters;
  faults: { add(rule: FaultRule): void; clear(): void; pending(): FaultRule[] };
  resetCounters(): void;
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
    case 'GET state':
      return jsonAnswer(200, target.store.dump());
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

/** JSON has no Infinity; say it in words rather than as null. */
function showInfinity(rule: FaultRule): unknown {
  return rule.times === Infinity ? { ...rule, times: 'Infinity' } : rule;
}
