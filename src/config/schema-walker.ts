/**
 * Finding the schema that applies at a place in the document, for what ajv does not tell: whether
 * a value should be a string (readTree), which keys are allowed where an unknown one stands.
 */
import { parsePointer } from './source-tree.js';
import type { JsonSchema } from './schema-validator.js';

/** Resolves local `$ref`s (`#/$defs/...`) of one schema, remembering each. */
export class SchemaWalker {
  private readonly refs = new Map<string, JsonSchema>();
  private identifiers: Set<JsonSchema> | undefined;
  constructor(readonly root: JsonSchema) {}

  /** Whether `schema` is the format's slug or identifier (`$defs/slug`, `$defs/identifier`): what the service is asked about by name. */
  isIdentifier(schema: JsonSchema | undefined): boolean {
    this.identifiers ??= new Set(['#/$defs/slug', '#/$defs/identifier'].map((ref) => this.resolve({ $ref: ref })).filter((s) => s !== undefined));
    return schema !== undefined && this.identifiers.has(schema);
  }

  resolve(schema: JsonSchema | undefined): JsonSchema | undefined {
    let current = schema;
    for (let hops = 0; current !== undefined && typeof current.$ref === 'string' && hops < 32; hops++) {
      const ref = current.$ref as string;
      let target = this.refs.get(ref);
      if (target === undefined) {
        target = this.lookup(ref);
        if (target === undefined) return undefined;
        this.refs.set(ref, target);
      }
      current = target;
    }
    return current;
  }

  private lookup(ref: string): JsonSchema | undefined {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = this.root;
    for (const segment of parsePointer(ref.slice(1))) {
      if (typeof node !== 'object' || node === null) return undefined;
      node = (node as Record<string, unknown>)[segment];
    }
    return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
  }

  /** The schema for the value under `key` of an object that `schema` describes. */
  property(schema: JsonSchema | undefined, key: string): JsonSchema | undefined {
    if (schema === undefined) return undefined;
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    if (properties !== undefined && Object.hasOwn(properties, key)) return this.resolve(properties[key]);
    const additional = schema.additionalProperties;
    return typeof additional === 'object' && additional !== null ? this.resolve(additional as JsonSchema) : undefined;
  }

  items(schema: JsonSchema | undefined): JsonSchema | undefined {
    const items = schema?.items;
    return typeof items === 'object' && items !== null ? this.resolve(items as JsonSchema) : undefined;
  }

  /** The schema at a path of object keys and list indexes from the root. */
  at(path: ReadonlyArray<string | number>): JsonSchema | undefined {
    let schema = this.resolve(this.root);
    for (const segment of path) {
      schema = typeof segment === 'number' ? this.items(schema) : this.property(schema, segment);
      if (schema === undefined) return undefined;
    }
    return schema;
  }
}
