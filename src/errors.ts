/**
 * The few error classes orgform throws. Each has a stable `code` that scripts may match on,
 * an optional `cause`, and a message that says what to do next. Nothing here may ever carry
 * a credential: callers remove the secrets they know (a token) where the error is made, and the
 * constructor removes, from the message and every detail, what has the shape of one (an address's
 * user information and query values, an Authorization value, a JWT: redact.ts).
 */
import type { ConfigProblem } from './model/config-problem.js';
import { redactSecrets } from './redact.js';

export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_IO'
  | 'USAGE'
  | 'API_ERROR'
  | 'TRANSPORT_ERROR'
  | 'UNSAFE_INPUT'
  | 'PLAN_STALE'
  | 'PLAN_INVALID'
  | 'PLAN_UNSAFE'
  | 'PLAN_NOT_REVIEWED'
  | 'STATE_INVALID'
  | 'STATE_LOCKED'
  | 'STATE_UNAVAILABLE'
  | 'STATE_LOCK_LOST'
  | 'INTERRUPTED'
  | 'RATE_LIMITED'
  | 'TOKEN_COMMAND_FAILED'
  | 'INTERNAL';

export class OrgformError extends Error {
  readonly code: ErrorCode;
  /** Lines shown under the message (one per problem), already formatted. */
  readonly details: readonly string[];

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: readonly string[] } = {}) {
    super(redactSecrets(message, []), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OrgformError';
    this.code = code;
    this.details = (options.details ?? []).map((detail) => redactSecrets(detail, []));
  }
}

/** Bad command-line usage: exit 1 with the message, no stack. */
export class UsageError extends OrgformError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('USAGE', message, options);
    this.name = 'UsageError';
  }
}

/** Invalid desired state: every problem as `FILE:LINE:COL: message`. */
export class ConfigError extends OrgformError {
  /** The same problems with their positions, for CI annotations and reports (the details are their text). */
  readonly problems: readonly ConfigProblem[];

  constructor(message: string, details: readonly string[] = [], options: { cause?: unknown; problems?: readonly ConfigProblem[] } = {}) {
    super('CONFIG_INVALID', message, { ...(options.cause === undefined ? {} : { cause: options.cause }), details });
    this.name = 'ConfigError';
    this.problems = options.problems ?? [];
  }
}

/** The token command (ORGFORM_TOKEN_COMMAND, --token-command) gave no token: exit 1, its status and a hint (never its stderr), no stack. */
export class TokenCommandError extends OrgformError {
  /** The command's exit status, when it exited. */
  readonly exitStatus: number | undefined;

  constructor(message: string, options: { exitStatus?: number; details?: readonly string[] } = {}) {
    super('TOKEN_COMMAND_FAILED', message, { details: options.details ?? [] });
    this.name = 'TokenCommandError';
    this.exitStatus = options.exitStatus;
  }
}

export function isOrgformError(value: unknown): value is OrgformError {
  return value instanceof OrgformError;
}
