/**
 * The observations a saved plan's changes depend on, written to a temp file beside the plan as they
 * are planned, and read back a line at a time when the plan is saved: `plan --out` of 500,000
 * changes would otherwise hold every one of them until the end. The file is made exclusively
 * (a planted name or link is never written through), 0600 as the plan, named as a temp file of the
 * plan's (`.NAME.PID.N.tmp`, so a killed run's is removed by the next write of the plan), and
 * removed once the plan is saved or the run fails.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { ObservedOrganisation } from '../../model/observed-organisation.js';
import { observedLine } from '../../plan/saved-plan.js';
import { cannotWrite, tempPathFor, type UserFile } from '../../state/write-file-atomically.js';

export class ObservationSpool {
  private failure: Error | undefined;

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
  ) {
    stream.on('error', (err) => (this.failure ??= err));
  }

  /** A new spool beside `planPath` (the resolved --out; `file` names it in a refusal). */
  static async open(planPath: string, file: UserFile): Promise<ObservationSpool> {
    const path = tempPathFor(planPath);
    try {
      // Where the plan will go may not exist yet (the plan's own write would make it).
      await mkdir(dirname(planPath), { recursive: true });
      const stream = createWriteStream(path, { flags: 'wx', mode: 0o600 });
      await Promise.race([once(stream, 'open'), once(stream, 'error').then(([err]) => Promise.reject(err as Error))]);
      return new ObservationSpool(path, stream);
    } catch (err) {
      throw cannotWrite(file, err);
    }
  }

  /** Called by the plan builder as each organisation with changes is planned. */
  readonly write = (slug: string, observed: ObservedOrganisation): void => {
    // The disk takes a line faster than the service gives an organisation: no need to wait for it.
    this.stream.write(observedLine(slug, observed));
  };

  /** The lines written, each with its newline, once every one is on disk. */
  async *lines(): AsyncGenerator<string> {
    await this.close();
    const input = createReadStream(this.path);
    try {
      for await (const text of createInterface({ input, crlfDelay: Infinity })) yield `${text}\n`;
    } finally {
      input.destroy();
    }
  }

  private async close(): Promise<void> {
    if (!this.stream.closed) {
      this.stream.end();
      await once(this.stream, 'close');
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /** Gone, whatever happened. */
  async remove(): Promise<void> {
    this.stream.destroy();
    await rm(this.path, { force: true });
  }
}
