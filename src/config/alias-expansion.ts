/**
 * The bound on what aliases may expand a document to (an alias bomb is a document whose aliases
 * expand it far beyond its size), measured without expanding anything: each node's counts are kept,
 * so the tree as written is walked once.
 */
import type { Position, PositionedMessage, SourceNode } from './source-tree.js';

/**
 * Once every alias is replaced by what it stands for, a document may hold at most this many nodes
 * (mappings, lists, keys and scalars) per character of the file. A file without aliases holds about
 * one node per 10 characters; one anchor shared by every organisation of a bulk file (`billing:
 * *shared`, a billing block of four fields) about one per 3. Validation reads each aliased node once
 * (see read-tree.ts), so a file within this is as quick to load as its size says, whatever its
 * aliases; the limit is for whatever else may read the file in full, such as the other YAML tools
 * of a pipeline.
 */
export const EXPANDED_NODES_PER_CHAR = 10;

/**
 * The same bound on the characters of the keys and scalars once expanded: a long string repeated by
 * aliases is few nodes, but may be billions of characters for validation to read (see
 * docs/performance.md). Without aliases a file holds fewer characters of text than it is long.
 */
export const EXPANDED_CHARS_PER_CHAR = 10;

interface Size {
  nodes: number;
  chars: number;
}

/** What the expanded document holds, and the aliases that stand for the most of each. */
interface Expansion extends Size {
  biggest: Position | undefined;
  longest: Position | undefined;
}

/** Counts each mapping and list once; an alias counts what it stands for each time it is met. */
class ExpansionCounter {
  private readonly counts = new Map<SourceNode, Size>();
  private readonly inProgress = new Set<SourceNode>();
  private biggest: { pos: Position; nodes: number } | undefined;
  private longest: { pos: Position; chars: number } | undefined;

  measure(root: SourceNode): Expansion {
    const { nodes, chars } = this.count(root);
    return { nodes, chars, biggest: this.biggest?.pos, longest: this.longest?.pos };
  }

  private count(node: SourceNode): Size {
    const known = this.counts.get(node);
    if (known !== undefined) return known;
    switch (node.kind) {
      case 'alias':
        return this.countAlias(node.pos, node.target);
      case 'scalar':
        return { nodes: 1, chars: node.source.length };
      case 'map':
      case 'seq':
        return this.countCollection(node);
    }
  }

  /** Not kept: each alias is its own node, met once. An alias inside what it refers to (a cycle, which readTree reports) counts as one node. */
  private countAlias(pos: Position, target: SourceNode): Size {
    const size = this.inProgress.has(target) ? { nodes: 1, chars: 0 } : this.count(target);
    if (this.biggest === undefined || size.nodes > this.biggest.nodes) this.biggest = { pos, nodes: size.nodes };
    if (this.longest === undefined || size.chars > this.longest.chars) this.longest = { pos, chars: size.chars };
    return size;
  }

  private countCollection(node: Extract<SourceNode, { kind: 'map' | 'seq' }>): Size {
    const size: Size = { nodes: 1, chars: 0 };
    this.inProgress.add(node);
    if (node.kind === 'map') {
      for (const pair of node.pairs) {
        const value = this.count(pair.value);
        size.nodes += 1 + value.nodes;
        size.chars += pair.key.source.length + value.chars;
      }
    } else {
      for (const item of node.items) {
        const value = this.count(item);
        size.nodes += value.nodes;
        size.chars += value.chars;
      }
    }
    this.inProgress.delete(node);
    this.counts.set(node, size);
    return size;
  }
}

function describeExcess(count: number, unit: string, per: number, textLength: number, at: Position | undefined): PositionedMessage | undefined {
  const budget = per * textLength;
  if (count <= budget) return undefined;
  const amount = count < 1e9 ? count.toLocaleString('en-US') : 'more than a billion';
  const message = `aliases expand this document to ${amount} ${unit}, over the ${budget.toLocaleString('en-US')} allowed for its size (${per} per character): an alias bomb? The file is rejected; the alias that expands the most is here`;
  return { pos: at ?? { line: 1, col: 1 }, message };
}

/** Why a document of `textLength` characters expands too far through its aliases, or undefined when it does not. */
export function findAliasBomb(root: SourceNode, textLength: number): PositionedMessage | undefined {
  const expansion = new ExpansionCounter().measure(root);
  return (
    describeExcess(expansion.nodes, 'nodes', EXPANDED_NODES_PER_CHAR, textLength, expansion.biggest) ??
    describeExcess(expansion.chars, 'characters of text', EXPANDED_CHARS_PER_CHAR, textLength, expansion.longest)
  );
}
