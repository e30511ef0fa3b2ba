/**
 * `orgform slugs check SLUG... | -`: availability of each slug, as a table or JSON; exit 1 when any
 * slug is unavailable, invalid or could not be checked. Wiring only: the checks are check-slugs.ts, the table and JSON views/.
 */
import { UsageError } from '../../errors.js';
import { checkSlugs, type SlugCheck } from './check-slugs.js';
import { parseSlugLines } from './parse-slug-lines.js';
import { renderSlugJson, slugTable, summariseSlugChecks } from './views/render-slug-table.js';
import { openClient } from '../../api/connect/open-client.js';
import { useColor } from '../../text/use-color.js';
import type { CliIO, ExitCode } from '../../io.js';

import type { ConnectionFlags } from '../../api/connect/resolve-connection.js';

export interface SlugsCheckFlags extends ConnectionFlags {
  parallelism: number;
  format: 'text' | 'json';
  color?: boolean;
}

/** Back to the start of the line, and clear it. */
const CLEAR = '\r\x1b[2K';

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

export async function run(flags: SlugsCheckFlags, io: CliIO, args: string[]): Promise<ExitCode> {
  const slugs = await collectSlugs(args, io);
  if (slugs.length === 0) throw new UsageError('No slugs to check: standard input had none (blank lines and # comments are skipped).');
  const client = await openClient(flags, io);
  try {
    if (flags.format === 'json') {
      // One document, written whole at the end.
      const checks = await checkSlugs(slugs, { client, parallelism: flags.parallelism, signal: io.signal });
      io.stdout.write(renderSlugJson(checks));
      return checks.every((c) => c.status === 'available') ? 0 : 1;
    }
    // The table a row at a time, in the order given, as soon as each is known.
    const table = slugTable(slugs, { color: useColor(flags, io) });
    // On a terminal, how far it has got, on standard error below the rows (cleared before each row
    // and at the end, so that a redirected standard output holds the table alone).
    const progress = io.stderr.isTTY === true ? (done: number) => io.stderr.write(`${CLEAR}checking slugs: ${done}/${slugs.length}`) : undefined;
    io.stdout.write(`${table.header}\n`);
    progress?.(0);
    let done = 0;
    const onResult = (check: SlugCheck) => {
      done += 1;
      if (progress) io.stderr.write(CLEAR);
      io.stdout.write(`${table.row(check)}\n`);
      progress?.(done);
    };
    const checks = await checkSlugs(slugs, { client, parallelism: flags.parallelism, signal: io.signal, onResult });
    if (progress) io.stderr.write(CLEAR);
    io.stdout.write(`\n${summariseSlugChecks(checks)}\n`);
    return checks.every((c) => c.status === 'available') ? 0 : 1;
  } finally {
    await client.close();
  }
}
