/**
 * Changes one scalar of a parsed orgs.yaml in its source tokens, so that the file written back is
 * byte for byte the one read everywhere else: comments, blank lines, quoting, anchors, order and the
 * column of a comment after the value all stay (a Document's toString would re-indent and re-space
 * the whole file, and a review would have to find the one real change among them). Pure: it edits
 * the tokens it is given.
 */
import { CST, type Scalar } from 'yaml';
import { formatYamlString, needsNoEscape, quoteYamlString, singleQuoteYamlString } from './format-yaml-string.js';

/** Columns, not UTF-16 units: what an editor lines a comment up by. */
function width(text: string): number {
  return [...text].length;
}

type Written = { block: false; source: string; type: 'scalar' | 'single-quoted-scalar' | 'double-quoted-scalar' } | { block: true; header: string; body: string };

function flow(source: string): Written {
  return { block: false, source, type: source.startsWith('"') ? 'double-quoted-scalar' : source.startsWith("'") ? 'single-quoted-scalar' : 'scalar' };
}

/**
 * `text` as a block scalar in the place of `token` (`|` literal or `>` folded), or undefined when it
 * cannot be one: empty, with a character that needs an escape, a line of spaces alone, or ending in
 * more than one line break (a `|+` scalar would take in the blank lines after it). Folded only for one line, which
 * folding leaves as it is. The content keeps the indentation the old one had.
 */
function asBlock(token: CST.BlockScalar, text: string, folded: boolean): Written | undefined {
  const header = token.props[0];
  if (header?.type !== 'block-scalar-header') return undefined;
  const breaks = /\n*$/.exec(text)![0].length;
  const content = text.slice(0, text.length - breaks);
  // A line of spaces alone would be read as an empty line.
  if (content === '' || breaks > 1 || !needsNoEscape(content, true) || /^[ \t]+$/m.test(content)) return undefined;
  if (folded && (content.includes('\n') || /^[ \t]/.test(content))) return undefined;
  const given = /[1-9]/.exec(header.source)?.[0];
  const oldFirst = token.source.split('\n').find((line) => line.trim() !== '');
  let indent = given !== undefined ? token.indent + Number(given) : oldFirst !== undefined ? /^ */.exec(oldFirst)![0].length : token.indent + 2;
  if (indent <= token.indent || indent - token.indent > 9) indent = token.indent + 2;
  // A first line that starts with a space would be taken for deeper indentation: say how deep.
  const indicator = /^\n*[ ]/.test(content) ? String(indent - token.indent) : '';
  // The lines end as the old ones did: a CRLF file stays CRLF throughout.
  const eol = token.source.includes('\r\n') ? '\r\n' : '\n';
  const body = content
    .split('\n')
    .map((line) => (line === '' ? '' : `${' '.repeat(indent)}${line}`))
    .join(eol);
  return { block: true, header: `${folded ? '>' : '|'}${indicator}${breaks === 0 ? '-' : ''}`, body: `${body}${eol}` };
}

/**
 * How `text` is written in the style of the scalar it replaces: plain stays plain where every YAML
 * reader reads it back as this string, and single quotes and block scalars stay so where the text
 * needs no escape; otherwise the nearest style that holds it, double quotes (a folded scalar of
 * several lines becomes literal).
 */
function writeInStyle(token: CST.FlowScalar | CST.BlockScalar, text: string): Written {
  switch (token.type) {
    case 'single-quoted-scalar':
      return flow(singleQuoteYamlString(text) ?? quoteYamlString(text));
    case 'double-quoted-scalar':
      return flow(quoteYamlString(text));
    case 'block-scalar': {
      const folded = token.props[0]?.type === 'block-scalar-header' && token.props[0].source.startsWith('>');
      return (folded ? asBlock(token, text, true) : undefined) ?? asBlock(token, text, false) ?? flow(quoteYamlString(text));
    }
    default:
      return flow(formatYamlString(text));
  }
}

/** `text` is what the loader must read before interpolation (`${` already written `$${`). */
export function setScalarText(node: Scalar, text: string): void {
  // What the Composer set for a scalar: a flow or a block scalar token.
  const token = node.srcToken as CST.FlowScalar | CST.BlockScalar | undefined;
  if (token === undefined) throw new Error('setScalarText needs a document parsed with keepSourceTokens');
  const written = writeInStyle(token, text);
  node.value = text;
  if (written.block) {
    // Block to block: the header (and the comment after it) stays where it is; only the indicators and the lines change.
    const header = (token as CST.BlockScalar).props[0];
    if (header?.type === 'block-scalar-header') header.source = written.header;
    token.source = written.body;
    return;
  }
  const oldWidth = token.type === 'block-scalar' ? undefined : width(token.source);
  // yaml rebuilds the token (a block scalar becomes a flow one, trailing comments are kept); the
  // text itself is then set to orgform's form, which yaml's escapes would differ from.
  CST.setScalarValue(token, text, { type: written.type === 'double-quoted-scalar' ? 'QUOTE_DOUBLE' : written.type === 'single-quoted-scalar' ? 'QUOTE_SINGLE' : 'PLAIN' });
  if (token.type === 'block-scalar') throw new Error('setScalarText: yaml kept a block scalar');
  token.type = written.type;
  token.source = written.source;

  // `id: org_acme      # a comment`: keep the comment where it was while there is room for it.
  const [space, comment] = token.end ?? [];
  if (oldWidth !== undefined && space?.type === 'space' && comment?.type === 'comment') {
    space.source = ' '.repeat(Math.max(1, space.source.length - (width(written.source) - oldWidth)));
  }
}
