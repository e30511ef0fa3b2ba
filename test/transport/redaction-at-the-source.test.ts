/**
 * Redaction at the source: the errors made from what crosses the network redact in their
 * constructors, with the run's Redactor, so that no call site has to; and every place in src/ that
 * makes one hands it the redactor.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/api-error.js';
import { Redactor } from '../../src/redact.js';
import { HttpStateError } from '../../src/state/http/terraform-http-state.js';
import { NotSentError, TransportError } from '../../src/transport/transport-error.js';

const TOKEN = 'live-token-7c1e9a';
const LATER = 'refreshed-token-5b2d';

describe('the errors of a request', () => {
  const tokens: string[] = [TOKEN];
  const redactor = new Redactor(tokens).add('proxy-pass-word');

  it('redact the token, a token handed out later, and a proxy’s password, wherever they stand', () => {
    tokens.push(LATER);
    const transport = new TransportError({ operation: 'getOrganisation', target: `organisation "${TOKEN}"`, failure: 'connection', detail: `reset by proxy-pass-word after ${LATER}`, attempts: 2, cause: new Error(`socket ${TOKEN}`), redactor });
    const api = new ApiError({ operation: 'getOrganisation', target: 'organisation "x"', status: 400, serviceCode: `bad_${TOKEN}`, serviceMessage: `echo ${LATER}`, serviceCause: `cause ${TOKEN}`, hint: `try ${TOKEN}`, attempts: 1, requestId: 'r', redactor });
    const notSent = new NotSentError({ operation: 'getOrganisation', target: `organisation "${LATER}"`, why: 'interrupted', redactor });
    for (const err of [transport, api, notSent]) {
      const shown = JSON.stringify({ ...err, message: err.message, cause: String((err as Error & { cause?: unknown }).cause) });
      expect(shown).not.toContain(TOKEN);
      expect(shown).not.toContain(LATER);
      expect(shown).not.toContain('proxy-pass-word');
    }
    expect(transport.detail).toBe('reset by [REDACTED] after [REDACTED]');
  });

  it('cut the service’s words only once redacted, so that no cut leaves a token’s start', () => {
    const api = new ApiError({ operation: 'getOrganisation', target: 'o', status: 400, serviceCode: 'c', serviceMessage: `${'x'.repeat(495)}${TOKEN}`, attempts: 1, requestId: 'r', redactor });
    expect(api.serviceMessage).toBe(`${'x'.repeat(495)}[REDA…`);
    expect(api.message).not.toContain('live-');
  });

  it('without a redactor, still remove what has a credential’s shape', () => {
    const err = new TransportError({ operation: 'getOrganisation', failure: 'connection', detail: 'sent Authorization: Bearer abc.def-123', attempts: 1 });
    expect(err.message).not.toContain('abc.def-123');
  });
});

describe('the HTTP state’s error', () => {
  it('redacts the state’s password and its Basic credential', () => {
    const basic = Buffer.from('ci:job-token-1234').toString('base64');
    const err = new HttpStateError({ location: 'https://state.example/s', why: `the server said job-token-1234 and ${basic}`, redactor: new Redactor().add('job-token-1234', basic) });
    expect(err.message).not.toMatch(/job-token-1234|Y2k6/);
    expect(err.why).toBe('the server said [REDACTED] and [REDACTED]');
  });
});

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const REDACTING = /\bnew (ApiError|TransportError|NotSentError|HttpStateError)\(\{/g;
/** What an error quotes that may hold a secret: it must then be given the redactor. */
const QUOTES = /\b(target|detail|serviceCode|serviceMessage|serviceCause|hint|cause|why: [^'`])/;

function sources(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(prefix, entry.name);
    if (entry.isDirectory()) return sources(join(dir, entry.name), path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The object literal that starts at `open` (its `{`), braces balanced. */
function literalAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === '{') depth += 1;
    if (text[i] === '}' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

describe('src/', () => {
  it('hands the redactor to every error it makes that quotes a target, the service or a failure', () => {
    const made: string[] = [];
    const missing: string[] = [];
    for (const file of sources(SRC)) {
      const text = readFileSync(join(SRC, file), 'utf8');
      for (const m of text.matchAll(REDACTING)) {
        const literal = literalAt(text, m.index + m[0].length - 1);
        const where = `${file}:${text.slice(0, m.index).split('\n').length} new ${m[1]}`;
        made.push(where);
        if (QUOTES.test(literal) && !/\bredactor\b/.test(literal)) missing.push(where);
      }
    }
    expect(made.length).toBeGreaterThan(8);
    expect(missing).toEqual([]);
  });
});
