/**
 * The style of orgform's pages (the plan page, the apply report): one sheet, inline, allowed by its
 * hash in the page's Content-Security-Policy (page-document.ts). Light and dark, every text colour
 * at a contrast of at least 4.5:1 on its background (WCAG AA), focus always visible.
 */
export const PAGE_STYLE = `${columnWidths()}
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --panel: #f6f8fa;
  --accept: #116329; --update: #7d4e00; --delete: #b3261e; --link: #0550ae;
  --warn-bg: #fff8c5; --warn-fg: #6b4400; --info-bg: #ddf4ff; --info-fg: #0a3069;
  --bad-bg: #ffebe9; --bad-fg: #8a1c15; --good-bg: #dafbe1; --good-fg: #0f5323;
  --focus: #0969da;
  --series-sent: #4472c4; --series-limit: #b35900; --series-throttled: #c62828; --series-flight: #5b3f99; --series-latency: #0f766e; --pause: #fde68a;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #3d444d; --panel: #151b23;
    --accept: #56d364; --update: #e3b341; --delete: #ff7b72; --link: #79c0ff;
    --warn-bg: #3b2e00; --warn-fg: #f2cc60; --info-bg: #0c2d6b; --info-fg: #a5d6ff;
    --bad-bg: #490202; --bad-fg: #ffa198; --good-bg: #04260f; --good-fg: #7ee787;
    --focus: #58a6ff;
    --series-sent: #79a6f2; --series-limit: #f0883e; --series-throttled: #ff7b72; --series-flight: #bc8cff; --series-latency: #56d4c4; --pause: #5a4400;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
/* A value without a space (a slug of 512 characters, an id, a service's message) wraps where it must: never wider than the page. */
main { max-width: 1280px; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
p { margin: .5rem 0; }
a { color: var(--link); }
code, .value { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
/* A name kept whole on its line, unless it is longer than the line. */
.name { display: inline-block; max-width: 100%; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.summary { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; padding: 0; list-style: none; }
.summary li { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .5rem .9rem; min-width: 7.5rem; }
.summary .n { display: block; font-size: 1.5rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.banner { border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0; border: 1px solid currentColor; }
.banner.warn { background: var(--warn-bg); color: var(--warn-fg); }
.banner.bad { background: var(--bad-bg); color: var(--bad-fg); }
.banner ul { margin: .25rem 0 0; padding-left: 1.25rem; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.rows { table-layout: fixed; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid var(--line); }
thead th { background: var(--panel); font-weight: 600; }
table.rows thead th { position: sticky; top: 0; z-index: 1; }
tbody th { font-weight: 500; }
td.num, th.num { text-align: right; }
/* Headings and counts are ours, and whole words: a column is never narrower than they are. */
thead th, .num { overflow-wrap: normal; }
tr.repeat > th { color: var(--muted); }
.groups td:first-child { width: 45%; }
table.overview { width: auto; min-width: 40rem; margin: .5rem 0 1rem; }
.act { font-weight: 600; white-space: nowrap; }
.act-accept, .out-applied { color: var(--accept); }
.act-update { color: var(--update); }
.act-delete, .out-failed, .out-stale { color: var(--delete); }
.out-started, .out-skipped { color: var(--update); }
.out-done { color: var(--muted); }
.mark { display: inline-block; max-width: 100%; margin: .1rem 0 .1rem .4rem; padding: 0 .45rem; border-radius: 6px; font-size: .8rem; line-height: 1.5; font-family: system-ui, sans-serif; }
td > .mark:first-child { margin-left: 0; }
.mark-warn { background: var(--warn-bg); color: var(--warn-fg); }
.mark-info { background: var(--info-bg); color: var(--info-fg); }
.mark-bad { background: var(--bad-bg); color: var(--bad-fg); }
.mark-good { background: var(--good-bg); color: var(--good-fg); }
form.filters { display: flex; flex-wrap: wrap; align-items: flex-end; gap: .75rem 1rem; padding: .75rem 1rem; margin: .5rem 0 1rem; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
form.filters label { display: block; font-size: .85rem; font-weight: 600; margin-bottom: .15rem; }
input, select, button { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--muted); border-radius: 6px; padding: .3rem .55rem; }
input[type=search] { min-width: 16rem; }
button { cursor: pointer; background: var(--panel); white-space: nowrap; }
button:hover { border-color: var(--fg); }
.status { font-weight: 600; margin: .5rem 0; }
.group-filter { background: var(--info-bg); color: var(--info-fg); border-radius: 8px; padding: .5rem .75rem; }
.more { display: flex; gap: .75rem; margin: 1rem 0; }
.notes { margin: .25rem 0 .5rem; padding-left: 1.25rem; color: var(--muted); }
.chart { width: 100%; height: auto; max-width: 1200px; display: block; margin: .5rem 0; }
.chart text { fill: var(--fg); font: 12px system-ui, sans-serif; }
.chart .axis { stroke: var(--muted); stroke-width: 1; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .sent { fill: var(--series-sent); }
.chart .throttled { fill: var(--series-throttled); }
.chart .limit { stroke: var(--series-limit); stroke-width: 2.5; stroke-dasharray: 7 4; fill: none; }
.chart .flight { stroke: var(--series-flight); stroke-width: 2; fill: none; }
.chart .latency { stroke: var(--series-latency); stroke-width: 2; fill: none; }
.chart .latency-max { stroke: var(--series-latency); stroke-width: 1; stroke-dasharray: 2 3; fill: none; }
.chart .pause { fill: var(--pause); opacity: .55; }
.legend { display: flex; flex-wrap: wrap; gap: .4rem 1.25rem; padding: 0; margin: .25rem 0; list-style: none; font-size: .9rem; }
.legend .key { display: inline-block; width: 1.6rem; height: .75rem; margin-right: .35rem; vertical-align: middle; border-radius: 2px; }
.key.sent { background: var(--series-sent); }
.key.throttled { background: var(--series-throttled); }
.key.limit { border-top: 3px dashed var(--series-limit); height: 0; }
.key.flight { border-top: 2px solid var(--series-flight); height: 0; }
.key.latency { border-top: 2px solid var(--series-latency); height: 0; }
.key.latency-max { border-top: 2px dotted var(--series-latency); height: 0; }
.key.pause { background: var(--pause); }
details > summary { cursor: pointer; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .25rem 0 1rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
`;

/** `.w1` … `.w60`: a column's width in percent, set on its heading (a table of rows is laid out fixed). */
function columnWidths(): string {
  return Array.from({ length: 60 }, (_, i) => `.w${i + 1} { width: ${i + 1}%; }`).join('\n');
}
