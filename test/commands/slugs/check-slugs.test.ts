import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/api-error.js';
import type { SlugAvailability } from '../../../src/api/types.js';
import { checkSlugs } from '../../../src/commands/slugs/check-slugs.js';

/** A slow service: each answer comes a few turns of the event loop later; in-flight requests are counted. */
function fakeClient(answer: (slug: string) => SlugAvailability | Error) {
  const state = { requested: [] as string[], inFlight: 0, maxInFlight: 0 };
  const client = {
    async getSlugAvailability(slug: string): Promise<SlugAvailability> {
      state.requested.push(slug);
      state.inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      state.inFlight -= 1;
      const result = answer(slug);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { client, state };
}

const taken = (slug: string): SlugAvailability => (slug.startsWith('taken') ? { ok: false, messages: ['This slug is already taken.'] } : { ok: true, messages: [] });

describe('checkSlugs', () => {
  it('returns one result per slug in the order given, with the service messages of unavailable ones', async () => {
    const { client } = fakeClient(taken);
    const checks = await checkSlugs(['free-1', 'taken-1', 'free-2'], { client, parallelism: 2 });
    expect(checks).toEqual([
      { slug: 'free-1', status: 'available', messages: [] },
      { slug: 'taken-1', status: 'unavailable', messages: ['This slug is already taken.'] },
      { slug: 'free-2', status: 'available', messages: [] },
    ]);
  });

  it('tells each result as soon as it and every one before it are known, in the order given', async () => {
    const gates = new Map<string, () => void>();
    const client = {
      getSlugAvailability: (slug: string) => new Promise<SlugAvailability>((resolve) => gates.set(slug, () => resolve({ ok: true, messages: [] }))),
    };
    const told: string[] = [];
    const done = checkSlugs(['a', 'b', 'c'], { client, parallelism: 3, onResult: (c) => told.push(c.slug) });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    gates.get('b')!();
    await turn();
    expect(told).toEqual([]);
    gates.get('a')!();
    await turn();
    expect(told).toEqual(['a', 'b']);
    gates.get('c')!();
    await done;
    expect(told).toEqual(['a', 'b', 'c']);
  });

  it('never has more requests in flight than the parallelism, and uses all of it', async () => {
    const { client, state } = fakeClient(taken);
    const slugs = Array.from({ length: 25 }, (_, i) => `slug-${i}`);
    await checkSlugs(slugs, { client, parallelism: 4 });
    expect(state.maxInFlight).toBe(4);
    expect(state.requested).toHaveLength(25);
  });

  it('reports a slug that cannot be carried in a URL path as invalid, without a request', async () => {
    const { client, state } = fakeClient(taken);
    const checks = await checkSlugs(['..', '.', '', ' padded', 'a/b'], { client, parallelism: 2 });
    expect(checks.map((c) => c.status)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'available']);
    expect(checks[0]?.messages).toEqual(['Not checked: it cannot be sent in a URL path (".." would change the path).']);
    expect(state.requested).toEqual(['a/b']);
  });

  it('reports a failed check as that slug’s error and still checks the others', async () => {
    const failure = new ApiError({ operation: 'getSlugAvailability', target: 'slug "boom"', status: 403, serviceCode: 'forbidden', serviceMessage: 'no', attempts: 1, requestId: 'r1' });
    const { client } = fakeClient((slug) => (slug === 'boom' ? failure : taken(slug)));
    const checks = await checkSlugs(['one', 'boom', 'taken-2'], { client, parallelism: 1 });
    expect(checks.map((c) => c.status)).toEqual(['available', 'error', 'unavailable']);
    expect(checks[1]?.error).toBe(failure.message);
  });

  it('once interrupted, starts nothing new and reports the rest as not checked', async () => {
    const controller = new AbortController();
    const { client, state } = fakeClient((slug) => {
      controller.abort();
      return taken(slug);
    });
    const checks = await checkSlugs(['a-1', 'a-2', 'a-3', 'a-4'], { client, parallelism: 1, signal: controller.signal });
    expect(state.requested).toEqual(['a-1']);
    expect(checks.map((c) => c.status)).toEqual(['available', 'error', 'error', 'error']);
    expect(checks[3]?.error).toBe('not checked: interrupted');
  });
});
