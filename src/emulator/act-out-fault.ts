/**
 * The faults that answer instead of the service (everything but drop, hang, lost-response and
 * delay-headers, which the server handles around processing). Each returns the status it sent.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { timerDelay } from '../api/rate/timer-delay.js';
import type { Fault } from './faults.js';
import { statusErrorAnswer, writeAnswer } from './http-answer.js';

export type AnsweringFault = Extract<Fault, { kind: 'status' | 'trickle' | 'huge' | 'html' | 'truncated-json' | 'redirect' }>;

export function isAnsweringFault(fault: Fault): fault is AnsweringFault {
  return ['status', 'trickle', 'huge', 'html', 'truncated-json', 'redirect'].includes(fault.kind);
}

/** Retry-After in delta-seconds, rounded up (the `retry-after: seconds` point). */
export const retryAfterInSeconds = (seconds: number): string => String(Math.ceil(seconds));

export function actOutFault(res: ServerResponse, fault: AnsweringFault, formatRetryAfter: (seconds: number) => string = retryAfterInSeconds): number {
  switch (fault.kind) {
    case 'status': {
      const headers: Record<string, string> = {};
      if (fault.retryAfter !== undefined) headers['retry-after'] = formatRetryAfter(fault.retryAfter);
      if (fault.body === undefined) {
        const answer = statusErrorAnswer(fault.status, `Injected fault: HTTP ${fault.status}.`, headers);
        if (fault.contentType) answer.headers = { ...answer.headers, 'content-type': fault.contentType };
        writeAnswer(res, answer);
      } else {
        headers['content-type'] = fault.contentType ?? 'application/json; charset=utf-8';
        // latin1: a legacy service's answer, not UTF-8 (é as the single byte E9).
        writeAnswer(res, { status: fault.status, headers, body: fault.bodyEncoding === 'latin1' ? Buffer.from(fault.body, 'latin1') : fault.body });
      }
      return fault.status;
    }
    case 'html':
      writeAnswer(res, { status: fault.status, headers: { 'content-type': 'text/html; charset=utf-8' }, body: renderHtmlPage(fault.status) });
      return fault.status;
    case 'truncated-json': {
      const status = fault.status ?? 200;
      const body = status < 400 ? '{"id":"org_00001","slug":"acme","displayName":"Acme Corpo' : '{"code":"internal","message":"Something went wr';
      writeAnswer(res, { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body });
      return status;
    }
    case 'redirect':
      writeAnswer(res, { status: fault.status, headers: { location: fault.location } });
      return fault.status;
    case 'huge':
      void streamHugeBody(res, fault.bytes);
      return 200;
    case 'trickle':
      startTrickle(res, fault.intervalMs, fault.chunk ?? ' ');
      return 200;
  }
}

/** A gateway's error page, as nginx writes it. */
export function renderHtmlPage(status: number): string {
  const title = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
  return `<!DOCTYPE html>\n<html><head><title>${title}</title></head><body><center><h1>${title}</h1></center><hr><center>nginx</center></body></html>\n`;
}

/** Valid-looking JSON of exactly `bytes` bytes (when that is enough for the frame), written with backpressure. */
async function streamHugeBody(res: ServerResponse, bytes: number): Promise<void> {
  const head = '{"organisations":[],"padding":"';
  const tail = '"}';
  const framed = bytes >= head.length + tail.length;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes) });
  if (framed) res.write(head);
  const piece = Buffer.alloc(64 * 1024, 'x');
  let left = framed ? bytes - head.length - tail.length : bytes;
  while (left > 0 && !res.destroyed) {
    const size = Math.min(left, piece.length);
    left -= size;
    if (!res.write(size === piece.length ? piece : piece.subarray(0, size))) {
      const goOn = await new Promise<boolean>((resolve) => {
        const onDrain = () => finish(true);
        const onClose = () => finish(false);
        const finish = (value: boolean) => {
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(value);
        };
        res.once('drain', onDrain);
        res.once('close', onClose);
      });
      if (!goOn) return;
    }
  }
  if (!res.destroyed) res.end(framed ? tail : undefined);
}

/** Headers at once, then a chunk per interval until the client goes away (or the server stops). */
function startTrickle(res: ServerResponse, intervalMs: number, chunk: string): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.flushHeaders();
  const timer = setInterval(() => {
    if (res.destroyed) clearInterval(timer);
    else res.write(chunk);
  }, timerDelay(intervalMs));
  res.once('close', () => clearInterval(timer));
}
