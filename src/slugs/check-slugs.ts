/**
 * Slug availability for many slugs through the deliberately slow endpoint, at most `parallelism`
 * requests at a time. Results come back in the order the slugs were given. A slug that cannot be
 * carried as one URL path segment is reported as invalid without a request; otherwise the service
 * decides, and its messages are reported as they are. A failure for one slug is that slug's result,
 * never the end of the others.
 */
import pLimit from 'p-limit';
import type { OrganisationsClient } from '../api/client.js';
import { checkIdentifier } from '../api/encode-segment.js';

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
}

export async function checkSlugs(slugs: readonly string[], options: CheckSlugsOptions): Promise<SlugCheck[]> {
  const limit = pLimit(options.parallelism);
  return Promise.all(
    slugs.map((slug) => {
      const unsafe = checkIdentifier(slug);
      if (unsafe !== undefined) {
        return { slug, status: 'invalid', messages: [`Not checked: it cannot be sent in a URL path (${unsafe}).`] } satisfies SlugCheck;
      }
      return limit(async (): Promise<SlugCheck> => {
        if (options.signal?.aborted) return { slug, status: 'error', messages: [], error: 'not checked: interrupted' };
        try {
          const { ok, messages } = await options.client.getSlugAvailability(slug);
          return { slug, status: ok ? 'available' : 'unavailable', messages: ok ? [] : messages };
        } catch (err) {
          return { slug, status: 'error', messages: [], error: err instanceof Error ? err.message : String(err) };
        }
      });
    }),
  );
}
