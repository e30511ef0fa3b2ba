// Preloaded into the orgform processes the bench runs (`node --import ./scripts/bench/probe.mjs`),
// never into the CLI itself. Through undici's diagnostics channels (published by the undici core
// whether the request came from fetch or from undici's request API) it notes when the first request
// was created and when the last one completed, and at exit writes those, the CPU time and the peak
// RSS to the file named by ORGFORM_BENCH_PROBE. Timestamps are milliseconds since the process
// started (performance.timeOrigin), so a run splits into start-up + config | requests | rendering + exit.
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { performance } from 'node:perf_hooks';

// ORGFORM_BENCH_V8_HEAP_GROWTH=1: the bench's "heap growth as V8 chooses" runs. orgform caps V8's
// heap growth by setting --heap-growing-percent at run time (src/cli/limit-heap-growth.ts);
// refusing that one flag leaves V8's own choice. Nothing else is changed, and the CLI itself has
// no switch.
if (process.env.ORGFORM_BENCH_V8_HEAP_GROWTH === '1') {
  const v8 = createRequire(import.meta.url)('node:v8');
  const setFlagsFromString = v8.setFlagsFromString;
  v8.setFlagsFromString = (flags) => (/--heap[-_]growing[-_]percent/.test(String(flags)) ? undefined : setFlagsFromString(flags));
  syncBuiltinESMExports();
}

const out = process.env.ORGFORM_BENCH_PROBE;
if (out) {
  let first = null;
  let last = null;
  let count = 0;
  let cpuAtFirst = null;
  subscribe('undici:request:create', () => {
    if (first === null) {
      first = performance.now();
      const usage = process.cpuUsage();
      cpuAtFirst = (usage.user + usage.system) / 1000;
    }
    count += 1;
  });
  const done = () => {
    last = performance.now();
  };
  subscribe('undici:request:trailers', done);
  subscribe('undici:request:error', done);
  // ORGFORM_BENCH_TIMELINE=1 (bench --timeline): each listing page's timeline, from undici's channels
  // (request created, its headers written, the answer's headers, its end) and from the listing's own
  // channel (src/api/listing-pages.ts; the floor client publishes the same), in milliseconds.
  const pages = process.env.ORGFORM_BENCH_TIMELINE === '1' ? recordPages() : undefined;
  process.on('exit', (code) => {
    const usage = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({
        code,
        requests: count,
        firstRequestMs: first,
        // CPU time (user + system) spent before the first request: start-up and configuration.
        cpuAtFirstRequestMs: cpuAtFirst,
        lastResponseMs: last,
        exitMs: performance.now(),
        userCpuMs: usage.userCPUTime / 1000,
        systemCpuMs: usage.systemCPUTime / 1000,
        // kilobytes on Linux and macOS alike (libuv normalises it)
        maxRssKB: usage.maxRSS,
        ...(pages === undefined ? {} : { pages }),
      }),
    );
  });
}

/** The listing's requests in the order they were created (page 1 first), and each page's steps by number. */
function recordPages() {
  const pages = [];
  const byRequest = new WeakMap();
  const at = (request, key) => {
    const page = byRequest.get(request);
    if (page !== undefined && page[key] === undefined) page[key] = performance.now();
  };
  subscribe('undici:request:create', ({ request }) => {
    if (!/\/organisations(\?|$)/.test(request.path)) return;
    const page = { created: performance.now() };
    pages.push(page);
    byRequest.set(request, page);
  });
  subscribe('undici:client:sendHeaders', ({ request }) => at(request, 'sent'));
  subscribe('undici:request:headers', ({ request }) => at(request, 'firstByte'));
  subscribe('undici:request:trailers', ({ request }) => at(request, 'end'));
  subscribe('orgform:listing-page', ({ page, step }) => {
    const record = pages[page - 1];
    if (record !== undefined && record[step] === undefined) record[step] = performance.now();
  });
  return pages;
}
