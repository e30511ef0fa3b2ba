/**
 * The one choke point for everything orgform writes in GitHub Actions (GITHUB_ACTIONS=true):
 * standard output and standard error are wrapped once, where the program is built, so that no
 * text (the service's, the files', an error's, whichever command writes it) can issue a workflow
 * command. Only orgform's own annotations and groups get through, each line sealed by
 * `workflowCommand` with a key drawn at random for the run, which the wrapper checks and removes.
 *
 * The runner (actions/runner, ActionCommand.cs) reads both streams line by line (a line ends at
 * `\n`, `\r` or `\r\n`) and acts on a line that starts with `::` after leading white space, and on
 * `##[` anywhere in a line (the legacy form). It compares culture-sensitively (StartsWith and
 * IndexOf without a StringComparison), and under such comparisons zero-width and other ignorable
 * characters do not count; so they are passed over here as if they were not there. Then:
 *
 * - a `:` that is the first visible character of a line is written `\u003a`;
 * - a `[` that follows `##` is written `\u005b`.
 *
 * In text both are visible. Inside a JSON string, or a double-quoted YAML scalar (export quotes
 * every string that holds `#`, `[` or `:`), they are the escapes of the same character, so the
 * documents on standard output keep their values. What has been seen of a line is kept from one
 * write to the next: a `::` or `##[` split across writes is caught all the same.
 */
import type { OutputStream } from '../cli-io.js';
import type { CiSettings } from './ci-settings.js';

/** The streams a command writes to, and the sealing of orgform's own command lines once guarded. */
export interface GuardedStreams {
  stdout: OutputStream;
  stderr: OutputStream;
  workflowCommand?: (line: string) => string;
}

export interface GuardOptions {
  /** Streams that the runner cannot read (main: redirected to a regular file), left as they are. */
  unread?: { stdout?: boolean; stderr?: boolean };
}

const GUARDED = new WeakSet<GuardedStreams>();

/**
 * `io` with both streams guarded, and `workflowCommand` to seal orgform's own command lines; `io`
 * itself outside GitHub Actions, or when it is guarded already (so that wrapping twice is harmless).
 */
export function guardWorkflowCommands<T extends GuardedStreams>(io: T, ci: Pick<CiSettings, 'githubActions'>, options: GuardOptions = {}): T {
  if (GUARDED.has(io) || !ci.githubActions) return io;
  // Unguessable and never written out: text cannot seal a line of its own.
  // (Web Crypto's global: the program is built before any command, and imports nothing it can spare.)
  const key = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const seal = `\u0000${key}\u0000`;
  const guarded: T = {
    ...io,
    stdout: guardStream(io.stdout, seal, options.unread?.stdout !== true),
    stderr: guardStream(io.stderr, seal, options.unread?.stderr !== true),
    workflowCommand(line: string) {
      // One line: a line break would let what follows it through unguarded.
      if (/[\r\n]/.test(line)) throw new Error('a workflow command is a single line');
      return `${seal}${line}`;
    },
  };
  GUARDED.add(guarded);
  return guarded;
}

/** What the runner has been shown of the current line, carried from one write to the next. */
interface LineState {
  /** Nothing at all since the last line break. */
  empty: boolean;
  /** Nothing but white space and ignorable characters since the last line break. */
  blank: boolean;
  /** `#` just seen (0, 1 or 2 of them), ignorable characters aside. */
  hashes: number;
}

function guardStream(inner: OutputStream, seal: string, neutralise: boolean): OutputStream {
  const state: LineState = { empty: true, blank: true, hashes: 0 };
  return {
    get isTTY() {
      return inner.isTTY;
    },
    write(chunk: string) {
      return inner.write(guardChunk(String(chunk), seal, state, neutralise));
    },
  };
}

function guardChunk(chunk: string, seal: string, state: LineState, neutralise: boolean): string {
  const parts = chunk.split(seal);
  let out = neutralise ? neutraliseText(parts[0] as string, state) : track(parts[0] as string, state);
  for (const part of parts.slice(1)) {
    // A sealed line is orgform's own command: it must start a line for the runner to read it.
    if (!state.empty) out += '\n';
    const end = part.search(/[\r\n]/);
    const command = end < 0 ? part : part.slice(0, end + (part.startsWith('\r\n', end) ? 2 : 1));
    out += command;
    // Unfinished (no line break in this write): what follows continues it, and cannot start a command.
    Object.assign(state, end < 0 ? { empty: false, blank: false, hashes: 0 } : { empty: true, blank: true, hashes: 0 });
    const rest = part.slice(command.length);
    out += neutralise ? neutraliseText(rest, state) : track(rest, state);
  }
  return out;
}

/** Text as it is, the state kept up to date (a stream the runner cannot read). */
function track(text: string, state: LineState): string {
  neutraliseText(text, state);
  return text;
}

// Printable ASCII but `#`, `:` and `[`, with space and tab: a run of them only ends a `##` (and,
// unless it is all white space, the start of a line). Skipped whole, so that the usual text costs
// one regular-expression match per run rather than a step per character.
const PLAIN_RUN = /[\t\x20-\x22\x24-\x39\x3b-\x5a\x5c-\x7e]+/y;
const NOT_WHITE = /[^\t ]/;

function neutraliseText(text: string, state: LineState): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    PLAIN_RUN.lastIndex = i;
    if (PLAIN_RUN.test(text)) {
      const end = PLAIN_RUN.lastIndex;
      if (state.blank && NOT_WHITE.test(text.slice(i, end))) state.blank = false;
      state.empty = false;
      state.hashes = 0;
      i = end;
      continue;
    }
    const c = text.charCodeAt(i);
    i += 1;
    if (c === 0x0a || c === 0x0d) {
      state.empty = true;
      state.blank = true;
      state.hashes = 0;
    } else if ((c === 0x3a /* : */ && state.blank) || (c === 0x5b /* [ */ && state.hashes >= 2)) {
      out += `${text.slice(from, i - 1)}${c === 0x3a ? '\\u003a' : '\\u005b'}`;
      from = i;
      state.empty = state.blank = false;
      state.hashes = 0;
    } else if (c === 0x23 /* # */) {
      state.empty = state.blank = false;
      state.hashes = Math.min(2, state.hashes + 1);
    } else if (isIgnorable(c)) {
      // Neither breaks a `##[` nor ends the start of a line.
      state.empty = false;
    } else {
      state.empty = state.blank = false;
      state.hashes = 0;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Characters that a culture-sensitive comparison may pass over, and non-ASCII white space, all
 * taken as not there: controls, format characters and Unicode's default-ignorable code points,
 * and every surrogate (a character outside the BMP is judged as ignorable, which can only mean more
 * is escaped, never less).
 */
function isIgnorable(c: number): boolean {
  return (
    c < 0x20 ||
    (c >= 0x7f && c <= 0xa0) ||
    c === 0xad ||
    c === 0x34f ||
    (c >= 0x600 && c <= 0x605) ||
    c === 0x61c ||
    c === 0x6dd ||
    c === 0x70f ||
    c === 0x890 ||
    c === 0x891 ||
    c === 0x8e2 ||
    c === 0x115f ||
    c === 0x1160 ||
    c === 0x1680 ||
    c === 0x17b4 ||
    c === 0x17b5 ||
    (c >= 0x180b && c <= 0x180f) ||
    (c >= 0x2000 && c <= 0x200f) ||
    (c >= 0x2028 && c <= 0x202f) ||
    (c >= 0x205f && c <= 0x206f) ||
    c === 0x3000 ||
    c === 0x3164 ||
    (c >= 0xd800 && c <= 0xdfff) ||
    (c >= 0xfe00 && c <= 0xfe0f) ||
    c === 0xfeff ||
    c === 0xffa0 ||
    (c >= 0xfff0 && c <= 0xfffb)
  );
}
