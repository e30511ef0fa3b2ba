// Preloaded into an orgform process the bench runs when ORGFORM_BENCH_TRACE names a file (never
// into the CLI itself): through undici's diagnostics channels, one line per request answered, "SENT
// ANSWERED METHOD STATUS PATH" (epoch milliseconds), written at exit. The shards case uses it to
// show each shard's requests over time (how the four share the limit).
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const out = process.env.ORGFORM_BENCH_TRACE;
if (out) {
  const lines = [];
  const sent = new WeakMap();
  const now = () => Math.round(performance.timeOrigin + performance.now());
  subscribe('undici:request:create', ({ request }) => sent.set(request, now()));
  subscribe('undici:request:headers', ({ request, response }) => {
    const at = sent.get(request);
    if (at !== undefined) lines.push(`${at} ${now()} ${request.method} ${response.statusCode} ${request.path}`);
  });
  process.on('exit', () => appendFileSync(out, lines.length > 0 ? `${lines.join('\n')}\n` : ''));
}

/** A trace file's lines → per `bucketMs` from `t0`: requests by kind (L listing, R read by id, W write; ! answered 429). */
export function traceTimeline(text, t0, bucketMs = 5_000) {
  const buckets = [];
  for (const line of text.split('\n')) {
    const [sentAt, , method, status, path] = line.split(' ');
    if (path === undefined) continue;
    const kind = (/\/organisations(\?|$)/.test(path) ? 'L' : method === 'GET' ? 'R' : 'W') + (status === '429' ? '!' : '');
    const at = Math.max(0, Math.floor((Number(sentAt) - t0) / bucketMs));
    buckets[at] ??= {};
    buckets[at][kind] = (buckets[at][kind] ?? 0) + 1;
  }
  return Array.from(buckets, (b) => b ?? {});
}
