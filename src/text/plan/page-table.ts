/**
 * The filterable table of a page (the plan's every change, the apply's every outcome): the form of
 * filters, the status line, the table's head, and the buttons that show more rows. The rows
 * themselves are the script's to draw from the page's data (page-script.ts), a page of them at a time.
 */
import { html, type Html } from './html.js';

export interface FilterControl {
  /** The filter's id in the page's data (PageTable.filters). */
  id: string;
  label: string;
  type: 'search' | 'select';
  /** A select's choices, in order (besides "Any"). */
  options?: readonly string[];
  placeholder?: string;
}

export interface TableSection {
  /** The section's element id and heading. */
  id: string;
  heading: string;
  intro?: Html;
  /** What the filters filter, for the form's accessible name: `the changes`. */
  what: string;
  controls: readonly FilterControl[];
  /** The visible columns' headings, in order, each with its width in percent of the table's. */
  headings: ReadonlyArray<readonly [label: string, width: number]>;
}

export function renderTableSection(section: TableSection): Html {
  const controls = section.controls.map((c) => {
    const id = `filter-${c.id}`;
    const input =
      c.type === 'search'
        ? html`<input id="${id}" type="search" data-filter="${c.id}" placeholder="${c.placeholder ?? ''}" autocomplete="off">`
        : html`<select id="${id}" data-filter="${c.id}"><option value="">Any</option>${(c.options ?? []).map((o) => html`<option>${o}</option>`)}</select>`;
    return html`<div><label for="${id}">${c.label}</label>${input}</div>\n`;
  });
  return html`<section id="${section.id}" aria-labelledby="${section.id}-heading">
<h2 id="${section.id}-heading">${section.heading}</h2>
${section.intro ?? html``}
<form class="filters" id="filters" role="search" aria-label="Filter ${section.what}">
${controls}<div><button type="reset">Clear the filters</button></div>
</form>
<p class="group-filter" id="group-filter" hidden>Showing one group: <span id="group-label"></span> <button type="button" id="group-clear" data-group="">Show every row</button></p>
<p class="status" id="status" role="status" aria-live="polite" tabindex="-1">The table needs JavaScript, which this page runs from within itself.</p>
<table class="rows">
<caption class="visually-hidden">${section.heading}</caption>
<thead><tr>${section.headings.map(([label, width]) => html`<th scope="col" class="w${Math.round(width)}">${label}</th>`)}</tr></thead>
<tbody id="rows"></tbody>
</table>
<div class="more"><button type="button" id="more" hidden>Show more</button><button type="button" id="all" hidden>Show all</button></div>
</section>
`;
}
