/**
 * `orgform slugs check`, start to finish: connect → check each slug (check-slugs.ts, at most
 * `parallelism` at a time) → close. The view hears the slugs before any is checked, each result as
 * soon as it and every one before it are known, and the whole list at the end.
 */
import type { OpenClient } from '../../api/connect/open-client.js';
import { checkSlugs, type SlugCheck } from './check-slugs.js';
import type { SlugsView } from './view.js';

export interface SlugsCheckInputs {
  /** Each once, in the order first given. */
  slugs: readonly string[];
  parallelism: number;
}

export interface SlugsCheckDeps {
  openClient: OpenClient;
  /** Once aborted, slugs not yet started are reported as not checked. */
  signal?: AbortSignal;
}

export async function runSlugsCheck(inputs: SlugsCheckInputs, deps: SlugsCheckDeps, view: SlugsView): Promise<SlugCheck[]> {
  // Connect: from here on the client tells the view itself.
  const { client } = await deps.openClient({ events: view });
  try {
    // Check, telling the view as results come.
    view.checking(inputs.slugs);
    const checks = await checkSlugs(inputs.slugs, {
      client,
      parallelism: inputs.parallelism,
      ...(deps.signal === undefined ? {} : { signal: deps.signal }),
      onResult: (check) => view.checked(check),
    });
    // Report.
    view.finished(checks);
    return checks;
  } finally {
    await client.close();
  }
}
