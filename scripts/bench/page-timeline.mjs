// The per-page timeline of a plan's listing (bench --timeline), beside the floor's: for each page,
// when its request was written (undici:client:sendHeaders), its first byte (undici:request:headers),
// its end (undici:request:trailers), and the listing's own steps (src/api/listing-pages.ts; the
// floor client publishes the same): read (parsed, shape checked), next (the next page decided and,
// read ahead, sent), checked (its organisations checked), used (the caller came back for more). The
// pages are a chain: what lies between a page's end and the next page's request is the client's.
// scripts/bench/probe.mjs records it; this file sums it up and prints it.

/** The gaps of one page, in ms; `chain`: from its end to the next page's request written. */
function gapsOf(page, after) {
  const gap = (from, to) => (from === undefined || to === undefined ? undefined : to - from);
  return {
    wait: gap(page.sent, page.firstByte),
    body: gap(page.firstByte, page.end),
    read: gap(page.end, page.read),
    next: gap(page.read, page.next),
    chain: gap(page.end, after?.sent),
    checked: gap(page.next, page.checked),
    used: gap(page.checked, page.used),
  };
}

const median = (values) => {
  const sorted = values.filter((v) => v !== undefined).sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[sorted.length >> 1];
};

/** A run's timeline summed up: the median gap of each kind over its pages, and the chain's whole gap. */
export function summariseTimeline(pages) {
  if (!Array.isArray(pages) || pages.length === 0) return undefined;
  const gaps = pages.map((page, i) => gapsOf(page, pages[i + 1]));
  const kinds = Object.keys(gaps[0]);
  const medians = Object.fromEntries(kinds.map((k) => [k, median(gaps.map((g) => g[k]))]));
  const chainMs = gaps.reduce((sum, g) => sum + (g.chain ?? 0), 0);
  return { pages: pages.length, medians, chainMs, gaps };
}

const f = (v) => (v === undefined ? '-' : v.toFixed(2));

/** The lines printed for the plan cases that carry a timeline (the median run of each, and its floor's). */
export function renderTimelines(cases, { table }) {
  const out = [];
  for (const c of cases.filter((x) => x.kind === 'plan' && x.timeline !== undefined)) {
    const floor = cases.find((x) => x.kind === 'floor' && x.of === 'plan' && x.organisations === c.organisations);
    const rows = [c, floor].filter((x) => x?.timeline !== undefined);
    out.push(`per-page timeline of ${c.case} (median run; ms, median over its ${c.timeline.pages} pages)`);
    out.push(
      table(
        ['run', 'sent→first byte', 'first byte→end', 'end→read', 'read→next', 'end→next sent', 'next→checked', 'checked→used', 'chain gaps (sum)'],
        rows.map((x) => [x.kind === 'floor' ? 'floor' : 'orgform', ...['wait', 'body', 'read', 'next', 'chain', 'checked', 'used'].map((k) => f(x.timeline.medians[k])), f(x.timeline.chainMs)]),
      ),
    );
    out.push('');
    const pages = Math.max(...rows.map((x) => x.timeline.gaps.length));
    const detail = [];
    for (let i = 0; i < pages; i += 1) {
      const cell = (x) => {
        const g = x?.timeline.gaps[i];
        return g === undefined ? '-' : `${f(g.wait)} ${f(g.body)} ${f(g.read)} ${f(g.chain)} ${f(g.used)}`;
      };
      detail.push([i + 1, cell(c), cell(floor)]);
    }
    out.push('page by page: sent→first byte, first byte→end, end→read, end→next sent, checked→used (ms)');
    out.push(table(['page', 'orgform', 'floor'], detail));
    out.push('');
  }
  return out;
}
