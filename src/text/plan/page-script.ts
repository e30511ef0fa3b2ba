/**
 * The script of orgform's pages: a table of rows (changes, or an apply's outcomes) read from the
 * page's JSON data, filtered by the page's own form, rendered a page of rows at a time so that
 * 100,000 rows open and filter at once. Plain browser JavaScript, inline, allowed by its hash in the
 * page's Content-Security-Policy (page-document.ts).
 *
 * It writes outside text only as text nodes (textContent), never as HTML, and makes no request.
 *
 * The data (`<script type="application/json" id="orgform-data">`, see PageTable):
 * - `columns`: `{ label, type: 'name' | 'action' | 'outcome' | 'code' | 'text', hidden? }`;
 * - `rows`: arrays of cells, a cell being its text or `[text, mark, …]`, marks indexing `marks`;
 * - `marks`: `{ label, tone: 'warn' | 'info' | 'bad' | 'good' }`, shown as badges after the text;
 * - `filters`: `{ id, type: 'search', columns }` (the cells' text), `{ id, type: 'marks', columns }`
 *   (the labels of the cells' marks) or `{ id, type: 'select', column }`, each read from the form
 *   control with `data-filter="id"`; `groupColumn`: the hidden column that buttons with
 *   `data-group` filter on; `noun`: `[singular, plural]`; `pageSize`.
 */
export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var source = document.getElementById('orgform-data');
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var columns = data.columns, rows = data.rows, marks = data.marks, filters = data.filters;
  var pageSize = data.pageSize || 500;
  var body = document.getElementById('rows');
  var status = document.getElementById('status');
  var moreButton = document.getElementById('more');
  var allButton = document.getElementById('all');
  var groupBox = document.getElementById('group-filter');
  var groupLabel = document.getElementById('group-label');
  var form = document.getElementById('filters');
  var state = { group: null };
  var matches = [];
  var shown = 0;
  var lowered = {};

  function text(cell) { return typeof cell === 'string' ? cell : cell[0]; }
  function plural(n, pair) { return n.toLocaleString('en') + ' ' + (n === 1 ? pair[0] : pair[1]); }

  function lowerColumn(c) {
    if (!lowered[c]) {
      var out = new Array(rows.length);
      for (var i = 0; i < rows.length; i++) out[i] = text(rows[i][c]).toLowerCase();
      lowered[c] = out;
    }
    return lowered[c];
  }

  // Per row, the labels of its marks in the filter's columns, lower-cased: what a marks filter searches.
  function lowerMarks(f) {
    var key = 'marks ' + f.id;
    if (!lowered[key]) {
      var out = new Array(rows.length);
      for (var i = 0; i < rows.length; i++) {
        var labels = '';
        for (var k = 0; k < f.columns.length; k++) {
          var cell = rows[i][f.columns[k]];
          if (typeof cell !== 'string') for (var m = 1; m < cell.length; m++) labels += marks[cell[m]].label.toLowerCase() + '\n';
        }
        out[i] = labels;
      }
      lowered[key] = out;
    }
    return lowered[key];
  }

  function control(id) { return form ? form.querySelector('[data-filter="' + id + '"]') : null; }

  function checks() {
    var list = [];
    filters.forEach(function (f) {
      var el = control(f.id);
      var value = el ? el.value : '';
      if (value === '') return;
      if (f.type === 'search' || f.type === 'marks') {
        var needle = value.trim().toLowerCase();
        if (needle === '') return;
        var cols = f.type === 'marks' ? [lowerMarks(f)] : f.columns.map(lowerColumn);
        list.push(function (i) { for (var k = 0; k < cols.length; k++) if (cols[k][i].indexOf(needle) !== -1) return true; return false; });
      } else {
        var c = f.column;
        list.push(function (i) { return text(rows[i][c]) === value; });
      }
    });
    if (state.group !== null) {
      var g = state.group, gc = data.groupColumn;
      list.push(function (i) { return rows[i][gc] === g; });
    }
    return list;
  }

  function filter() {
    var list = checks();
    matches = [];
    outer: for (var i = 0; i < rows.length; i++) {
      for (var k = 0; k < list.length; k++) if (!list[k](i)) continue outer;
      matches.push(i);
    }
    body.textContent = '';
    shown = 0;
    render(pageSize);
  }

  function badge(index) {
    var mark = marks[index];
    var span = document.createElement('span');
    span.className = 'mark mark-' + mark.tone;
    span.textContent = mark.label;
    return span;
  }

  function cellNode(col, cell, tag) {
    var node = document.createElement(tag);
    var value = text(cell);
    if (col.type === 'action' || col.type === 'outcome') {
      var span = document.createElement('span');
      span.className = (col.type === 'action' ? 'act act-' : 'act out-') + value.split(' ').pop();
      span.textContent = value;
      node.appendChild(span);
    } else if (col.type === 'code' && value !== '') {
      var code = document.createElement('code');
      code.textContent = value;
      node.appendChild(code);
    } else {
      node.appendChild(document.createTextNode(value));
    }
    if (typeof cell !== 'string') for (var m = 1; m < cell.length; m++) node.appendChild(badge(cell[m]));
    return node;
  }

  function rowNode(row, previous) {
    var tr = document.createElement('tr');
    var first = true;
    for (var c = 0; c < columns.length; c++) {
      var col = columns[c];
      if (col.hidden) continue;
      var node = cellNode(col, row[c], first ? 'th' : 'td');
      if (first) {
        node.scope = 'row';
        if (previous && text(previous[c]) === text(row[c])) tr.className = 'repeat';
      }
      first = false;
      tr.appendChild(node);
    }
    return tr;
  }

  function render(n) {
    var end = Math.min(matches.length, shown + n);
    var fragment = document.createDocumentFragment();
    var previous = shown > 0 ? rows[matches[shown - 1]] : null;
    for (var k = shown; k < end; k++) {
      var row = rows[matches[k]];
      fragment.appendChild(rowNode(row, previous));
      previous = row;
    }
    body.appendChild(fragment);
    shown = end;
    var all = rows.length, found = matches.length;
    var said = found === all ? plural(all, data.noun) : found.toLocaleString('en') + ' of ' + plural(all, data.noun) + ' match';
    status.textContent = said + (shown < found ? '; showing the first ' + shown.toLocaleString('en') + '.' : '.');
    var left = found - shown;
    moreButton.hidden = left <= 0;
    allButton.hidden = left <= pageSize;
    moreButton.textContent = 'Show ' + Math.min(pageSize, left).toLocaleString('en') + ' more';
    allButton.textContent = 'Show all ' + found.toLocaleString('en');
  }

  function setGroup(group, label) {
    state.group = group;
    groupBox.hidden = group === null;
    groupLabel.textContent = label || '';
    filter();
  }

  if (form) {
    form.addEventListener('input', filter);
    form.addEventListener('change', filter);
    form.addEventListener('submit', function (e) { e.preventDefault(); filter(); });
    form.addEventListener('reset', function () { setTimeout(function () { setGroup(null); }, 0); });
  }
  moreButton.addEventListener('click', function () { render(pageSize); });
  allButton.addEventListener('click', function () { render(matches.length); });
  document.addEventListener('click', function (e) {
    var target = e.target instanceof Element ? e.target.closest('[data-group]') : null;
    if (!target) return;
    if (target.id === 'group-clear') { setGroup(null); status.focus(); return; }
    setGroup(target.getAttribute('data-group'), target.getAttribute('data-label'));
    document.getElementById('every-change').scrollIntoView();
    status.focus();
  });
  filter();
  // For whoever waits for the table (a test, the bench): drawn, and when.
  performance.mark('orgform-ready');
  document.documentElement.setAttribute('data-ready', 'true');
})();
`;
