import type { Position, PositionedMessage } from './source-tree.js';

/**
 * Messages, each said once: the same message at the same place comes again when a node is read
 * again through an alias, or when ajv refuses one value under several keywords (minLength and
 * pattern, say), and would only be noise.
 */
export class UniqueMessages {
  readonly messages: PositionedMessage[] = [];
  private readonly seen = new Set<string>();

  add(pos: Position, message: string): void {
    const id = `${pos.line}:${pos.col}:${message}`;
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.messages.push({ pos, message });
  }
}
