/**
 * Changes one scalar of a parsed orgs.yaml in its source tokens, so that the file written back is
 * byte for byte the one read everywhere else: comments, blank lines, quoting, anchors, order and the
 * column of a comment after the value all stay (a Document's toString would re-indent and re-space
 * the whole file, and a review would have to find the one real change among them). Pure: it edits
 * the tokens it is given.
 */
import { CST, type Scalar } from 'yaml';
import { formatYamlString } from './format-yaml-string.js';

/** Columns, not UTF-16 units: what an editor lines a comment up by. */
function width(text: string): number {
  return [...text].length;
}

/**
 * `text` is what the loader must read before interpolation (`${` already written `$${`). It is
 * written on one line, plain only where every YAML reader reads it back as this string, otherwise
 * double-quoted with orgform's escapes (format-yaml-string.ts), whatever the style it replaces:
 * plain, quoted, or a block scalar over several lines.
 */
export function setScalarText(node: Scalar, text: string): void {
  // What the Composer set for a scalar: a flow or a block scalar token.
  const token = node.srcToken as CST.FlowScalar | CST.BlockScalar | undefined;
  if (token === undefined) throw new Error('setScalarText needs a document parsed with keepSourceTokens');
  const oldWidth = token.type === 'block-scalar' ? undefined : width(token.source);
  const source = formatYamlString(text);
  const quoted = source.startsWith('"');
  // yaml rebuilds the token (a block scalar becomes a flow one, trailing comments are kept); the
  // text itself is then set to orgform's form, which yaml's escapes would differ from.
  CST.setScalarValue(token, text, { type: quoted ? 'QUOTE_DOUBLE' : 'PLAIN' });
  if (token.type === 'block-scalar') throw new Error('setScalarText: yaml kept a block scalar');
  token.type = quoted ? 'double-quoted-scalar' : 'scalar';
  token.source = source;
  node.value = text;

  // `id: org_acme      # a comment`: keep the comment where it was while there is room for it.
  const [space, comment] = token.end ?? [];
  if (oldWidth !== undefined && space?.type === 'space' && comment?.type === 'comment') {
    space.source = ' '.repeat(Math.max(1, space.source.length - (width(source) - oldWidth)));
  }
}
