/**
 * Reading what a request carries: its body (capped), its credentials, its tracing headers.
 * Never keeps or reports a token beyond handing it to the store.
 */
import type { IncomingMessage } from 'node:http';

export const MAX_BODY_BYTES = 64 * 1024;
// Past the cap the body is still read and discarded up to here, so the client sees the 413
// instead of a reset; beyond it the connection is given up.
const MAX_DRAIN_BYTES = 8 * 1024 * 1024;

export type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too-large'; drained: boolean } | { kind: 'aborted' };

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_DRAIN_BYTES) {
      resolve({ kind: 'too-large', drained: false });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > MAX_DRAIN_BYTES) settle({ kind: 'too-large', drained: false });
    };
    req.on('data', onData);
    req.once('end', () => settle(size > limit ? { kind: 'too-large', drained: true } : { kind: 'ok', body: Buffer.concat(chunks) }));
    req.once('error', () => settle({ kind: 'aborted' }));
    req.once('close', () => {
      if (!req.complete) settle({ kind: 'aborted' });
    });
  });
}

export interface Credentials {
  token?: string;
  via: 'bearer' | 'cookie' | 'none';
}

/** `Authorization: Bearer <token>`; with `allowCookie`, `Cookie: bearerToken=<token>` when there is no Authorization header. */
export function readCredentials(req: IncomingMessage, allowCookie: boolean): Credentials {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
    return match?.[1] ? { token: match[1], via: 'bearer' } : { via: 'none' };
  }
  if (allowCookie) {
    const token = readCookie(req.headers.cookie, 'bearerToken');
    if (token) return { token, via: 'cookie' };
  }
  return { via: 'none' };
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

/** A single-valued header as sent, or undefined when absent. */
export function readHeader(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
