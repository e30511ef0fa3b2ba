/**
 * The emulator's seed format: what `--data FILE` holds, what `--save FILE` and
 * `GET /__emulator/state` write, and what tests and benchmarks build.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Organisation } from '../api/types.js';

export interface EmulatorUserData {
  token: string;
  email: string;
  /** Identifiers of the organisations the user is a member of. */
  memberships: string[];
  /** Identifier of the active organisation, when one was set. */
  active?: string;
}

export interface EmulatorInvitationData {
  id: string;
  organisationId: string;
  email: string;
  /** False once accepted; absent means pending. Deleted invitations are not kept at all. */
  pending?: boolean;
}

export interface EmulatorChannelData {
  id: string;
  organisationId: string;
}

export interface EmulatorData {
  users: EmulatorUserData[];
  organisations: Organisation[];
  invitations: EmulatorInvitationData[];
  channels: EmulatorChannelData[];
}

export function cloneEmulatorData(data: EmulatorData): EmulatorData {
  return structuredClone(data);
}

/** Problems with a seed document, one line each; empty when it can be loaded. */
export function validateEmulatorData(value: unknown): string[] {
  if (!isRecord(value)) return ['the document must be a JSON object'];
  const problems: string[] = [];
  for (const key of ['users', 'organisations', 'invitations', 'channels'] as const) {
    const list = value[key];
    if (list === undefined && key !== 'users' && key !== 'organisations') continue;
    if (!Array.isArray(list)) {
      problems.push(`"${key}" must be an array`);
      continue;
    }
    list.forEach((item, i) => {
      for (const field of REQUIRED_STRINGS[key]) {
        if (!isRecord(item) || typeof item[field] !== 'string') problems.push(`${key}[${i}].${field} must be a string`);
      }
      if (key === 'users' && isRecord(item) && !isStringArray(item.memberships)) {
        problems.push(`users[${i}].memberships must be an array of organisation identifiers`);
      }
    });
  }
  return problems;
}

const REQUIRED_STRINGS = {
  users: ['token', 'email'],
  organisations: ['id', 'slug'],
  invitations: ['id', 'organisationId', 'email'],
  channels: ['id', 'organisationId'],
} as const;

/** Reads and checks a seed file; throws a plain Error naming the file and the first problems. */
export async function readEmulatorData(file: string | URL): Promise<EmulatorData> {
  const text = await readFile(file, 'utf8');
  const name = file instanceof URL ? fileURLToPath(file) : file;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not valid JSON: ${(err as Error).message}`);
  }
  const problems = validateEmulatorData(value);
  if (problems.length > 0) {
    throw new Error(`${name} is not emulator data: ${problems.slice(0, 5).join('; ')}`);
  }
  const data = value as Partial<EmulatorData> & Pick<EmulatorData, 'users' | 'organisations'>;
  return { users: data.users, organisations: data.organisations, invitations: data.invitations ?? [], channels: data.channels ?? [] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
