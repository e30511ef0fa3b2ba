/**
 * A whole page of orgform's as one self-contained HTML file: its style, its script and its data
 * inline, nothing fetched. The page's Content-Security-Policy forbids every request (`default-src
 * 'none'`: no image, font, frame, fetch or form submission) and runs only this page's own style and
 * script, allowed by their SHA-256 hashes: a value from the service that got past escaping could
 * still neither run nor send anything. The page's table (page-script.ts) is built from `table`.
 */
import { createHash } from 'node:crypto';
import { html, NO_HTML, scriptJson, trustedCode, type Html } from './html.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/** A badge after a cell's text: what it marks, and how it looks. */
export interface PageMark {
  label: string;
  tone: 'warn' | 'info' | 'bad' | 'good';
}

/** A cell: its text, or its text and the indexes of its marks. */
export type PageCell = string | [string, ...number[]];

export interface PageTable {
  columns: Array<{ label: string; type: 'name' | 'action' | 'outcome' | 'code' | 'text'; hidden?: boolean }>;
  rows: PageCell[][];
  marks: PageMark[];
  /** A search of the cells' text, a search of their marks' labels, or a choice of one cell's text. */
  filters: Array<{ id: string; type: 'search' | 'marks'; columns: number[] } | { id: string; type: 'select'; column: number }>;
  /** The hidden column that the buttons with `data-group` filter on. */
  groupColumn?: number;
  noun: [singular: string, plural: string];
  pageSize?: number;
}

export interface PageDocument {
  title: string;
  body: Html;
  table?: PageTable;
}

const hash = (code: string) => `'sha256-${createHash('sha256').update(code, 'utf8').digest('base64')}'`;

/** The policy: nothing from anywhere, this page's style and script only. */
export const PAGE_POLICY = `default-src 'none'; style-src ${hash(PAGE_STYLE)}; script-src ${hash(PAGE_SCRIPT)}; base-uri 'none'; form-action 'none'`;

export function renderPageDocument(page: PageDocument): string {
  const data = page.table === undefined ? NO_HTML : html`<script type="application/json" id="orgform-data">${scriptJson(page.table)}</script>\n`;
  const script = page.table === undefined ? NO_HTML : html`<script>${trustedCode(PAGE_SCRIPT)}</script>\n`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${PAGE_POLICY}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${page.title}</title>
<style>${trustedCode(PAGE_STYLE)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<main id="main">
${page.body}
</main>
${data}${script}</body>
</html>
`.text;
}
