/**
 * `orgform slugs check SLUG... | -`: availability of each slug, as a table or JSON; exit 1 when any
 * slug is unavailable, invalid or could not be checked. The flags and the slugs (standard input's
 * for `-`); the run is flow.ts, what it shows view.ts.
 */
import { UsageError } from '../../errors.js';
import { runSlugsCheck } from './flow.js';
import { createSlugsView } from './view.js';
import { clientOpener, type OpenClientSettings } from '../../api/connect/open-client.js';
import { useColor, type ColorSettings } from '../../text/ansi.js';
import type { CliIO, ExitCode } from '../../cli-io.js';
import type { ConnectionFlags } from '../../api/connect/resolve-connection.js';

export interface SlugsCheckFlags extends ConnectionFlags {
  parallelism: number;
  format: 'text' | 'json';
  color?: boolean;
}

/** More than this on standard input is surely not a list of slugs. */
const MAX_STDIN_BYTES = 16 * 1024 * 1024;

async function readAll(stdin: CliIO['stdin']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size > MAX_STDIN_BYTES) throw new UsageError(`Standard input is over ${MAX_STDIN_BYTES / (1024 * 1024)} MiB: give the slugs in smaller batches.`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Slugs from a text with one per line (`orgform slugs check -`): surrounding white space trimmed,
 * blank lines and `#` comment lines skipped.
 */
export function parseSlugLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The slugs named, `-` replaced by standard input's lines, each slug once, in the order first given. */
async function collectSlugs(args: readonly string[], io: CliIO): Promise<string[]> {
  const slugs: string[] = [];
  let readStdin = false;
  for (const arg of args) {
    if (arg !== '-') slugs.push(arg);
    else if (!readStdin) {
      readStdin = true;
      slugs.push(...parseSlugLines(await readAll(io.stdin)));
    }
  }
  return [...new Set(slugs)];
}

/** The settings slugs check reads (cli/settings.ts): where to connect and how. */
export interface SlugsCheckSettings extends Omit<OpenClientSettings, 'parallelism'> {
  color: ColorSettings;
}

export async function run(flags: SlugsCheckFlags, io: CliIO, args: string[], settings: SlugsCheckSettings): Promise<ExitCode> {
  const slugs = await collectSlugs(args, io);
  if (slugs.length === 0) throw new UsageError('No slugs to check: standard input had none (blank lines and # comments are skipped).');
  const view = createSlugsView({ format: flags.format, out: io.stdout, err: io.stderr, color: useColor(flags, settings.color, io.stdout) });
  const openClient = clientOpener({ ...settings, parallelism: flags.parallelism }, io);
  const checks = await runSlugsCheck({ slugs, parallelism: flags.parallelism }, { openClient, signal: io.signal }, view);
  return checks.every((c) => c.status === 'available') ? 0 : 1;
}
