/**
 * Narrowing a desired state to some organisations: `--target SLUG` (repeatable) and
 * `--shard i/n`. Shards are deterministic by slug (FNV-1a), so every job of a pipeline computes
 * the same split without talking to the others, and every organisation is in exactly one shard.
 */
import { UsageError } from '../errors.js';
import type { DesiredState } from '../model/desired-state.js';

export interface Shard {
  index: number; // 1-based
  count: number;
}

export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count || count > 10_000) {
    throw new UsageError(`--shard takes i/n with 1 <= i <= n (got "${text}"), e.g. --shard 2/4.`);
  }
  return { index, count };
}

/** 32-bit FNV-1a of the slug's UTF-8 bytes: stable across machines and Node versions. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function shardOf(slug: string, count: number): number {
  return (fnv1a(slug) % count) + 1;
}

export function selectOrganisations(desired: DesiredState, options: { targets?: string[]; shard?: Shard }): DesiredState {
  const targets = options.targets ?? [];
  let keep: (slug: string) => boolean = () => true;
  if (targets.length > 0) {
    const declared = new Set(desired.organisations.map((o) => o.slug));
    if (desired.activeOrganisation) declared.add(desired.activeOrganisation.slug);
    const unknown = targets.filter((t) => !declared.has(t));
    if (unknown.length > 0) {
      throw new UsageError(`--target names organisations the configuration does not declare: ${unknown.join(', ')}.`);
    }
    const wanted = new Set(targets);
    keep = (slug) => wanted.has(slug);
  }
  const shard = options.shard;
  const inShard = shard ? (slug: string) => shardOf(slug, shard.count) === shard.index : () => true;
  const selected = (slug: string) => keep(slug) && inShard(slug);
  const active = desired.activeOrganisation;
  return {
    ...desired,
    organisations: desired.organisations.filter((o) => selected(o.slug)),
    ...(active !== undefined && selected(active.slug) ? { activeOrganisation: active } : { activeOrganisation: undefined }),
  };
}
