/**
 * Slug availability for many slugs through the deliberately slow endpoint, at most `parallelism`
 * requests at a time. Results come back in the order the slugs were given, and each is told as soon
 * as it and all before it are known (42 slugs at a second each were 5.7 s of silence). A slug that cannot be
 * carried as one URL path segment is reported as invalid without a request; otherwise the service
 * decides, and its messages are reported as they are. A failure for one slug is that slug's result,
 * never the end of the others.
 */
import pLimit from 'p-limit';
import { NotSentError } from '../../api/api-error.js';
import type { OrganisationsClient } from '../../api/client.js';
import { checkIdentifier } from '../../api/encode-segment.js';

export type SlugStatus = 'available' | 'unavailable' | 'invalid' | 'error';

export interface SlugCheck {
  slug: string;
  status: SlugStatus;
  /** The service's reasons when unavailable; orgform's own reason when invalid; empty otherwise. */
  messages: string[];
  /** Why the check itself failed (status `error`). */
  error?: string;
}

export interface CheckSlugsOptions {
  client: Pick<OrganisationsClient, 'getSlugAvailability'>;
  parallelism: number;
  /** Once aborted, slugs not yet started are reported as not checked. */
  signal?: AbortSignal;
  /** Each result as soon as it and every one before it are known, in the order given: for a view that streams. */
  onResult?: (check: SlugCheck) => void;
}

export async function checkSlugs(slugs: readonly string[], options: CheckSlugsOptions): Promise<SlugCheck[]> {
  const limit = pLimit(options.parallelism);
  const results: Array<SlugCheck | undefined> = [];
  let told = 0;
  const settle = (index: number, check: SlugCheck): SlugCheck => {
    results[index] = check;
    for (let next = results[told]; next !== undefined; next = results[told]) {
      told += 1;
      options.onResult?.(next);
    }
    return check;
  };
  return Promise.all(slugs.map(async (slug, index) => settle(index, await checkOne(slug, limit, options))));
}

/** One slug's check: invalid without a request, else the service's answer; never throws. */
async function checkOne(slug: string, limit: ReturnType<typeof pLimit>, options: CheckSlugsOptions): Promise<SlugCheck> {
  const unsafe = checkIdentifier(slug);
  if (unsafe !== undefined) return { slug, status: 'invalid', messages: [`Not checked: it cannot be sent in a URL path (${unsafe}).`] };
  return limit(async (): Promise<SlugCheck> => {
    if (options.signal?.aborted) return { slug, status: 'error', messages: [], error: 'not checked: interrupted' };
    try {
      const { ok, messages } = await options.client.getSlugAvailability(slug);
      return { slug, status: ok ? 'available' : 'unavailable', messages: ok ? [] : messages };
    } catch (err) {
      // Let go unanswered, or never sent, on the interrupt: said as of those not started.
      if (options.signal?.aborted && err instanceof NotSentError) return { slug, status: 'error', messages: [], error: 'not checked: interrupted' };
      return { slug, status: 'error', messages: [], error: err instanceof Error ? err.message : String(err) };
    }
  });
}
