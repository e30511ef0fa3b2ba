/**
 * One run's log of the file state (R.<run>.log): created when the run records its first entry,
 * appended to only by that run, and never again once it ends, so that a last line a killed run cut
 * short is never glued to. An append counts only once all its bytes are on disk: a short write is
 * continued, and a write that fails is cut back off the log (best effort; a reader leaves out a
 * last line cut short) and thrown.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory, writeAll } from '../write-file-atomically.js';

export class RunLog {
  private constructor(
    private readonly handle: FileHandle,
    /** What is on disk of it: where the next append starts. */
    private size: number,
  ) {}

  /** Creates the log at `path`: a new file (never one already there, nor through a link), its name made durable. */
  static async create(path: string): Promise<RunLog> {
    const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | constants.O_NOFOLLOW, 0o600);
    try {
      await syncDirectory(dirname(path));
    } catch (err) {
      await handle.close();
      throw err;
    }
    return new RunLog(handle, 0);
  }

  /** Appends `bytes` (whole lines) and resolves once they are all on disk; on failure the log is cut back to where it was. */
  async append(bytes: Buffer): Promise<void> {
    try {
      await writeAll(this.handle, bytes);
      await this.handle.datasync();
      this.size += bytes.length;
    } catch (err) {
      await this.handle.truncate(this.size).catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
