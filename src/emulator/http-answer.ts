/**
 * The HTTP answers the emulator gives, as plain values until written, so that they can be stored
 * for idempotent replay and reshaped (successStyle) before they go out.
 */
import type { ServerResponse } from 'node:http';
import { codeForStatus, toErrorBody, type StoreFailure } from './failure.js';

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Undefined: no body at all. */
  /** A string is sent as UTF-8; bytes as they are (a fault's body in another encoding). */
  body?: string | Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function jsonAnswer(status: number, value: unknown, headers: Record<string, string> = {}): Answer {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(value) };
}

export function errorAnswer(failure: StoreFailure, headers: Record<string, string> = {}): Answer {
  return jsonAnswer(failure.status, toErrorBody(failure), headers);
}

export function statusErrorAnswer(status: number, message: string, headers: Record<string, string> = {}): Answer {
  return errorAnswer({ status, code: codeForStatus(status), message }, headers);
}

export const noContent = (): Answer => ({ status: 204 });

/** Writes unless the client has gone; true when written. */
export function writeAnswer(res: ServerResponse, answer: Answer): boolean {
  if (res.destroyed || res.writableEnded || res.headersSent) return false;
  const headers: Record<string, string> = { ...answer.headers };
  const bodiless = answer.status === 204 || answer.status === 304;
  if (!bodiless) headers['content-length'] = String(Buffer.byteLength(answer.body ?? ''));
  res.writeHead(answer.status, headers);
  res.end(bodiless ? undefined : answer.body);
  return true;
}
