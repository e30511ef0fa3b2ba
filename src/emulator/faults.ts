/**
 * Fault injection: a FIFO list of rules, each taking the next matching requests of an operation
 * (or of any, with `*`) and answering them with a fault instead of, or after, normal processing.
 */
import { OPERATION_IDS, type OperationId } from '../api/types.js';

export type Fault =
  | { kind: 'status'; status: number; retryAfter?: number; body?: string; contentType?: string; bodyEncoding?: 'utf8' | 'latin1' }
  | { kind: 'drop' }
  | { kind: 'lost-response' }
  | { kind: 'hang' }
  /** Held, counted in flight, until the emulator's `release()` (or POST /__emulator/release); then answered as usual. */
  | { kind: 'hold' }
  /** Processed when it comes, answered `ms` later; with `renew`, the organisations of the answer are renewed meanwhile. */
  | { kind: 'delay-headers'; ms: number; renew?: boolean }
  /** A listing request whose last page links back to the start under a fresh cursor, and no totalCount. */
  | { kind: 'cycle' }
  | { kind: 'trickle'; intervalMs: number; chunk?: string }
  | { kind: 'huge'; bytes: number }
  | { kind: 'html'; status: number }
  | { kind: 'truncated-json'; status?: number }
  | { kind: 'redirect'; status: 301 | 302 | 307 | 308; location: string };

export type FaultKind = Fault['kind'];

export interface FaultRule {
  operation?: OperationId | '*';
  method?: string;
  /** How many matching requests the rule takes; default 1, Infinity allowed. */
  times?: number;
  /** Share of matching requests that get the fault (0..1); default 1. */
  probability?: number;
  fault: Fault;
}

export interface FaultController {
  add(rule: FaultRule): void;
  clear(): void;
  /** The rules not yet used up, in order, with `times` as what remains. */
  pending(): FaultRule[];
}

export class FaultList implements FaultController {
  private rules: Array<FaultRule & { times: number }> = [];

  constructor(private readonly random: () => number = Math.random) {}

  add(rule: FaultRule): void {
    const problem = checkFaultRule(rule);
    if (problem) throw new TypeError(`Invalid fault rule: ${problem}`);
    this.rules.push({ ...rule, times: rule.times ?? 1 });
  }

  clear(): void {
    this.rules = [];
  }

  pending(): FaultRule[] {
    return this.rules.map((r) => structuredClone(r));
  }

  /** The fault for this request, if a rule takes it; a rule that takes it counts one use down. */
  take(operation: OperationId | 'unknown', method: string): Fault | undefined {
    for (let i = 0; i < this.rules.length; i += 1) {
      const rule = this.rules[i];
      if (!rule || !matches(rule, operation, method)) continue;
      if (rule.probability !== undefined && rule.probability < 1 && this.random() >= rule.probability) continue;
      rule.times -= 1;
      if (rule.times <= 0) this.rules.splice(i, 1);
      return rule.fault;
    }
    return undefined;
  }
}

function matches(rule: FaultRule, operation: OperationId | 'unknown', method: string): boolean {
  if (rule.operation !== undefined && rule.operation !== '*' && rule.operation !== operation) return false;
  return rule.method === undefined || rule.method.toUpperCase() === method.toUpperCase();
}

/**
 * Checks a rule that may come from JSON (the admin endpoint): returns the rule with
 * `times: "Infinity"` read as Infinity, or a message saying what is wrong.
 */
export function parseFaultRule(value: unknown): FaultRule | string {
  if (!isRecord(value)) return 'a rule must be a JSON object';
  const rule = { ...value } as Record<string, unknown>;
  if (rule.times === 'Infinity' || rule.times === null) rule.times = Infinity;
  return checkFaultRule(rule) ?? (rule as unknown as FaultRule);
}

/** Undefined when the rule is well-formed, else what is wrong with it. */
export function checkFaultRule(value: unknown): string | undefined {
  if (!isRecord(value)) return 'a rule must be an object';
  const { operation, method, times, probability, fault } = value;
  if (operation !== undefined && operation !== '*' && !OPERATION_IDS.includes(operation as OperationId)) {
    return `unknown operation ${JSON.stringify(operation)}`;
  }
  if (method !== undefined && (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))) return 'method must be an HTTP method';
  if (times !== undefined && !(typeof times === 'number' && (times === Infinity || (Number.isInteger(times) && times >= 1)))) {
    return 'times must be a whole number of at least 1, or Infinity';
  }
  if (probability !== undefined && !(typeof probability === 'number' && probability >= 0 && probability <= 1)) {
    return 'probability must be a number from 0 to 1';
  }
  return checkFault(fault);
}

function checkFault(fault: unknown): string | undefined {
  if (!isRecord(fault)) return 'fault must be an object';
  const isStatus = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 200 && v <= 599;
  const isCount = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  switch (fault.kind) {
    case 'status':
      if (!isStatus(fault.status)) return 'status must be a status code from 200 to 599';
      if (fault.retryAfter !== undefined && !isCount(fault.retryAfter)) return 'retryAfter must be a number of seconds';
      if (fault.body !== undefined && typeof fault.body !== 'string') return 'body must be a string';
      if (fault.contentType !== undefined && typeof fault.contentType !== 'string') return 'contentType must be a string';
      if (fault.bodyEncoding !== undefined && fault.bodyEncoding !== 'utf8' && fault.bodyEncoding !== 'latin1') return 'bodyEncoding must be "utf8" or "latin1"';
      return undefined;
    case 'drop':
    case 'lost-response':
    case 'hang':
    case 'hold':
      return undefined;
    case 'delay-headers':
      if (fault.renew !== undefined && typeof fault.renew !== 'boolean') return 'renew must be true or false';
      return isCount(fault.ms) ? undefined : 'ms must be a number of milliseconds';
    case 'cycle':
      return undefined;
    case 'trickle':
      if (!isCount(fault.intervalMs) || (fault.intervalMs as number) < 1) return 'intervalMs must be at least 1';
      return fault.chunk === undefined || (typeof fault.chunk === 'string' && fault.chunk.length > 0) ? undefined : 'chunk must be a non-empty string';
    case 'huge':
      return isCount(fault.bytes) && Number.isInteger(fault.bytes) ? undefined : 'bytes must be a whole number';
    case 'html':
      return isStatus(fault.status) ? undefined : 'status must be a status code from 200 to 599';
    case 'truncated-json':
      return fault.status === undefined || isStatus(fault.status) ? undefined : 'status must be a status code from 200 to 599';
    case 'redirect':
      if (![301, 302, 307, 308].includes(fault.status as number)) return 'a redirect status must be 301, 302, 307 or 308';
      return typeof fault.location === 'string' && fault.location.length > 0 ? undefined : 'location must be a string';
    default:
      return `unknown fault kind ${JSON.stringify(fault.kind)}`;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
