import { describe, expect, it } from 'vitest';
import { RunTimelineRecorder } from '../../../src/model/run-timeline.js';
import { renderRunChartMermaid } from '../../../src/text/plan/render-run-chart-mermaid.js';
import { niceCeil, renderRunChartSvg } from '../../../src/text/plan/render-run-chart-svg.js';
import { describeRun } from '../../../src/text/plan/run-chart-series.js';
import { rateLimitedTimeline } from './sample-apply-report.js';

const T0 = 1_000_000;

describe('describeRun', () => {
  it('says how many requests, the 429s, where the run waited and for how long, the rate held to and the latency', () => {
    expect(describeRun(rateLimitedTimeline())).toEqual([
      '862 requests in 1 min, at most 18 in flight.',
      '32 answers were 429 (too many requests), and 1 attempt failed without an answer or with a 5xx.',
      'Every request was held back once, 3 s in all; the longest wait began 8s in and lasted 3 s.',
      'orgform held itself to between 10 and 19 requests a second (unlimited at other times).',
      'Answers took 677 ms on average, 849 ms at the slowest.',
    ]);
  });

  it('says so when nothing limited the rate and no answer was 429', () => {
    const r = new RunTimelineRecorder(T0);
    r.requestSent(T0);
    r.requestEnded(T0 + 20, { status: 200, latencyMs: 20 });
    expect(describeRun(r.timeline(T0 + 20))).toEqual(['1 request in 1 s, at most 1 in flight.', 'No answer was 429 (too many requests).', 'Nothing limited the rate.', 'Answers took 20 ms on average, 20 ms at the slowest.']);
  });
});

describe('renderRunChartSvg', () => {
  const svg = renderRunChartSvg(rateLimitedTimeline(), { title: 'The run', description: 'It waited.' }).text;

  it('is an image with its title and description, drawn from numbers only', () => {
    expect(svg).toMatch(/^<svg class="chart" viewBox="0 0 1200 \d+" role="img" aria-labelledby="chart-title chart-desc"/);
    expect(svg).toContain('<title id="chart-title">The run</title>\n<desc id="chart-desc">It waited.</desc>');
    expect(svg).not.toMatch(/NaN|Infinity|undefined|<script|style=/);
  });

  it('draws a bar a second for what was sent and for the 429s, shades the wait, and breaks the rate line where nothing limited it', () => {
    expect(svg.match(/<rect class="sent"/g)).toHaveLength(57);
    expect(svg.match(/<rect class="throttled"/g)).toHaveLength(3);
    // Three seconds held back, shaded in each of the three panels.
    expect(svg.match(/<rect class="pause"/g)).toHaveLength(9);
    const limit = /<path class="limit" d="([^"]+)"/.exec(svg)![1]!;
    expect(limit.match(/M/g)).toHaveLength(1);
    // 62 buckets across the 1,120 units of the plot from x = 64; the rate, on an axis topped at 25 over
    // 190 units from y = 28, is cut to 10 at second 8 and raised to 13 at second 30.
    const x = (second: number) => Math.round((64 + (second * 1120) / 62) * 10) / 10;
    const y = (rps: number) => Math.round((28 + 190 - (rps / 25) * 190) * 10) / 10;
    expect(limit.startsWith(`M${x(8)} ${y(10)}H${x(30)}V${y(13)}H`)).toBe(true);
    expect(svg).toContain('<path class="flight" d="M64 ');
  });

  it('labels the time axis as a clock counts, at a round step', () => {
    expect([...svg.matchAll(/text-anchor="middle">([^<]+)</g)].map((m) => m[1])).toEqual(['0s', '10s', '20s', '30s', '40s', '50s', '1m 0s']);
  });

  it('draws the latency of a run of one second as a level stroke, not a line of one point that shows nothing', () => {
    const r = new RunTimelineRecorder(T0);
    r.requestSent(T0);
    r.requestEnded(T0 + 90, { status: 200, latencyMs: 90 });
    const one = renderRunChartSvg(r.timeline(T0 + 100), { title: 't', description: 'd' }).text;
    expect(/<path class="latency" d="([^"]+)"/.exec(one)![1]).toMatch(/^M[\d.]+ [\d.]+H[\d.]+$/);
  });

  it('shades a wait where it was: at the end of the second it began in, from the start of the next', () => {
    const r = new RunTimelineRecorder(T0);
    r.requestSent(T0);
    r.paused(T0 + 1_800, T0 + 2_500);
    r.requestEnded(T0 + 3_900, { status: 200, latencyMs: 3_900 });
    const svg = renderRunChartSvg(r.timeline(T0 + 3_900), { title: 't', description: 'd' }).text;
    // Four buckets of 280 units from x = 64: 0.2 of the second bucket at its end, then half of the third from its start.
    expect([...svg.matchAll(/<rect class="pause" x="([\d.]+)" y="28" width="([\d.]+)"/g)].map((m) => [Number(m[1]), Number(m[2])])).toEqual([
      [64 + 280 + 224, 56],
      [64 + 560, 140],
    ]);
  });

  it('draws an empty run without a number out of place', () => {
    const empty = renderRunChartSvg(new RunTimelineRecorder(T0).timeline(T0), { title: 't', description: 'd' }).text;
    expect(empty).not.toMatch(/NaN|Infinity/);
  });

  it('tops each axis at a round number', () => {
    expect([0.3, 1, 3, 12.5, 13, 24, 101, 849].map(niceCeil)).toEqual([0.5, 1, 5, 20, 20, 25, 200, 1000]);
  });
});

describe('renderRunChartMermaid', () => {
  const markdown = renderRunChartMermaid(rateLimitedTimeline()).text;
  const charts = [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1]!);

  it('says the run in words, then three xychart-beta charts on one time axis, each saying what its series are', () => {
    expect(markdown.startsWith('#### The run over time\n\n- 862 requests in 1 min, at most 18 in flight.\n')).toBe(true);
    expect(charts).toHaveLength(3);
    expect(charts.map((c) => c.split('\n').slice(1, 5))).toEqual([
      ['xychart-beta', '  title "Requests a second"', '  x-axis "seconds since the first request" 0 --> 62', '  y-axis "Requests a second" 0 --> 25'],
      ['xychart-beta', '  title "Requests in flight"', '  x-axis "seconds since the first request" 0 --> 62', '  y-axis "Requests in flight" 0 --> 20'],
      ['xychart-beta', '  title "Latency (ms)"', '  x-axis "seconds since the first request" 0 --> 62', '  y-axis "Latency (ms)" 0 --> 1000'],
    ]);
    expect(markdown).toContain('_Requests sent a second (blue bars), the 429 answers among them (red bars, in front), and the rate orgform held itself to (orange line; along the top where nothing limited it); a bar is 2 s._');
  });

  it('gives every series as many points as the others, at most 60, as plain numbers', () => {
    const series = charts.flatMap((c) => [...c.matchAll(/^ {2}(?:bar|line) \[([^\]]*)\]$/gm)].map((m) => m[1]!.split(', ')));
    expect(series).toHaveLength(6);
    expect(new Set(series.map((s) => s.length))).toEqual(new Set([31]));
    expect(series.flat().every((v) => /^\d+(\.\d)?$/.test(v))).toBe(true);
    // The wait: nothing sent in the bar of seconds 8 and 9, the rate cut to 10 from there.
    expect(series[0]!.slice(3, 6)).toEqual(['24', '0', '5']);
    expect(series[2]!.slice(3, 6)).toEqual(['25', '10', '10']);
  });

  it('draws no rate line when nothing ever limited the rate', () => {
    const r = new RunTimelineRecorder(T0);
    r.requestSent(T0);
    r.requestEnded(T0 + 5, { status: 200, latencyMs: 5 });
    const plain = renderRunChartMermaid(r.timeline(T0 + 5)).text;
    expect(plain).not.toContain('orange line');
    expect(plain.match(/^ {2}line /gm)).toHaveLength(3);
  });

  it('names what a timeline of changes counts, and that its 429s are its requests’', () => {
    const changes = renderRunChartMermaid({ ...rateLimitedTimeline(), unit: 'change' }).text;
    expect(changes).toContain('- 862 changes in 1 min, at most 18 in flight.');
    expect(changes).toContain('_Changes started a second (blue bars), the 429 answers to their requests (red bars, in front), and the rate');
    expect(changes).toContain('  title "Changes in flight"\n  x-axis "seconds since the first change" 0 --> 62');
    expect(changes).toContain('_How long changes took, in milliseconds: the mean of those that ended in each bar (green), and the slowest (grey)._');
  });
});
