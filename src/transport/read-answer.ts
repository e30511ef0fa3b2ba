/**
 * Reading an answer's body: up to a size cap, so that a hostile or broken server cannot make orgform
 * hold a 100 MB answer in memory; strictly as UTF-8; inflated when it was compressed as orgform
 * asked (gzip or deflate), the cap counting what it inflates to; and never in an encoding orgform
 * did not ask for.
 *
 * Inflated with node:zlib here rather than by undici's decompress interceptor: that interceptor
 * prints an ExperimentalWarning on stderr the first time it is made (every run would), and wraps
 * every answer, compressed or not, in a handler and a controller of its own.
 */
import { pipeline } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';

/** Sent as Accept-Encoding: what the answer may be compressed with. */
export const ACCEPT_ENCODING = 'gzip, deflate';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export class BodyNotUtf8Error extends Error {
  constructor() {
    super('the answer is not valid UTF-8 (JSON must be)');
    this.name = 'BodyNotUtf8Error';
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The stream of an answer from undici's request API (a Node Readable of Buffers). */
export interface BodyStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  destroy(err?: Error): unknown;
}

/** Who is told how reading a body ended: its text, or why there is none. */
export interface BodySink {
  onBody(text: string): void;
  onBodyError(err: unknown): void;
}

export type Headers = Record<string, string | string[] | undefined>;

/** A header undici may hand over as a list (it was sent twice). */
export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The answer's Content-Encoding, lower case; undefined when there is none (or `identity`). */
export function encodingOf(headers: Headers): string | undefined {
  const encoding = firstHeader(headers['content-encoding'])?.trim().toLowerCase();
  return encoding === undefined || encoding === '' || encoding === 'identity' ? undefined : encoding;
}

/**
 * Why an answer's encoding cannot be read (br, compress, or several layers: read as they come, they
 * would only fail later as "not UTF-8", or a mislabelled plain answer be read as if the label were
 * not there); undefined when it can.
 */
export function refusedEncoding(encoding: string | undefined): string | undefined {
  if (encoding === undefined || encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate') return undefined;
  const shown = encoding.length > 60 ? `${encoding.slice(0, 60)}…` : encoding;
  return `the answer is encoded as "${shown}", which orgform did not ask for (it asks for ${ACCEPT_ENCODING.replace(', ', ' or ')}); nothing is read from it`;
}

/**
 * Reads `body` (encoded as `encoding`, which refusedEncoding let through) and tells `sink`. Events
 * rather than an async iterator or a web stream: this runs once per request, and a bulk apply sends
 * 100,000. An answer whose Content-Length is over the cap is refused at once, unread.
 */
export function readBody(body: BodyStream, headers: Headers, maxBytes: number, sink: BodySink): void {
  const encoding = encodingOf(headers);
  if (encoding === undefined) return readStreamCapped(body, headers['content-length'], maxBytes, sink);
  // Asked for, as fetch does: a compressed answer is read inflated, and the cap counts what it inflates to.
  const inflate = encoding === 'deflate' ? createInflate() : createGunzip();
  readStreamCapped(pipeline(body as never, inflate, () => undefined) as unknown as BodyStream, undefined, maxBytes, sink);
}

function readStreamCapped(body: BodyStream, declaredLength: string | string[] | undefined, maxBytes: number, sink: BodySink): void {
  const declared = Number(declaredLength);
  if (typeof declaredLength === 'string' && Number.isFinite(declared) && declared > maxBytes) {
    discardBody(body);
    return sink.onBodyError(new BodyTooLargeError(maxBytes));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  body.on('data', (chunk) => {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      sink.onBodyError(new BodyTooLargeError(maxBytes));
      return;
    }
    chunks.push(chunk);
  });
  body.on('end', () => {
    let text: string;
    try {
      // Strictly: a value read wrongly (U+FFFD in place of an é a Latin-1 answer carried) would be
      // written back as if read, over the service's own.
      text = UTF8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    } catch {
      return sink.onBodyError(new BodyNotUtf8Error());
    }
    sink.onBody(text);
  });
  body.on('error', (err) => sink.onBodyError(err));
}

/** Stops reading an answer (its connection is closed); destroying undici's body emits an error, which nobody needs. */
export function discardBody(body: BodyStream): void {
  body.on('error', () => undefined);
  body.destroy();
}
