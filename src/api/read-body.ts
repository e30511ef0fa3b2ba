/**
 * Reads a response body up to a size cap, so that a hostile or broken server cannot make orgform
 * hold a 100 MB answer in memory: a fetch Response (the HTTP state backend) or an undici request body (the service).
 */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export async function readBodyCapped(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(maxBytes);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  // Strictly: a value read wrongly (U+FFFD in place of an é a Latin-1 answer carried) would be
  // written back as if read, over the service's own.
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw new BodyNotUtf8Error();
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class BodyNotUtf8Error extends Error {
  constructor() {
    super('the answer is not valid UTF-8 (JSON must be)');
    this.name = 'BodyNotUtf8Error';
  }
}

/** The stream of an answer from undici's request API (a Node Readable of Buffers). */
export interface BodyStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  destroy(err?: Error): unknown;
}

/**
 * The same cap, and the same strict UTF-8, for an answer read with undici's request API: events
 * rather than an async iterator or a web stream, as this runs once per request (a bulk apply sends
 * 100,000). `declaredLength`: its Content-Length, when that counts the bytes read here.
 */
export function readStreamCapped(body: BodyStream, declaredLength: string | string[] | undefined, maxBytes: number): Promise<string> {
  const declared = Number(declaredLength);
  if (typeof declaredLength === 'string' && Number.isFinite(declared) && declared > maxBytes) {
    discardBody(body);
    return Promise.reject(new BodyTooLargeError(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk) => {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    body.on('end', () => {
      try {
        resolve(UTF8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
      } catch {
        reject(new BodyNotUtf8Error());
      }
    });
    body.on('error', reject);
  });
}

/** Stops reading an answer (its connection is closed); destroying undici's body emits an error, which nobody needs. */
export function discardBody(body: BodyStream): void {
  body.on('error', () => undefined);
  body.destroy();
}
