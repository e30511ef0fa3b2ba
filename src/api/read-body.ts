/**
 * Reads a response body up to a size cap, so that a hostile or broken server cannot make orgform
 * hold a 100 MB answer in memory.
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
