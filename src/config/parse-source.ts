/**
 * A file's bytes → its SourceTree, or what is wrong with it. Rejects what is not YAML text before
 * any YAML parser sees it, then parses with the fast parser when it can, else with the yaml package
 * (imported only then: most files never need it).
 */
import { parseYamlFast } from './parse-yaml-fast.js';
import type { Position, PositionedMessage, SourceNode } from './source-tree.js';

/** The largest orgs file: the yaml package's time and memory grow with the file (docs/performance.md); beyond this, split it. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

export type ParseSourceResult = { ok: true; root: SourceNode | null } | { ok: false; problems: PositionedMessage[] };

export function describeSize(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function tooLargeMessage(bytes: number): string {
  return `file is ${describeSize(bytes)}, over the ${MAX_FILE_BYTES / (1024 * 1024)} MiB limit: split it into several files in a directory and pass that with -f`;
}

/** YAML's line breaks: CR LF, LF, or CR alone (old Mac files; valid YAML 1.2). */
const LINE_BREAK = /\r\n?|\n/g;

function positionAt(text: string, index: number): Position {
  let line = 1;
  let lineStart = 0;
  for (const match of text.slice(0, index).matchAll(LINE_BREAK)) {
    line += 1;
    lineStart = match.index + match[0].length;
  }
  return { line, col: index - lineStart + 1 };
}

/**
 * A CR alone is a line break in YAML, but neither the yaml package nor the fast parser takes it
 * for one: each is read as LF instead. The text keeps its length, so positions stay true.
 */
function normaliseLoneCr(text: string): string {
  return text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
}

type DecodeResult = { ok: true; text: string } | { ok: false; problems: PositionedMessage[] };

function fail(pos: Position, message: string): { ok: false; problems: PositionedMessage[] } {
  return { ok: false, problems: [{ pos, message }] };
}

export function decodeSource(bytes: Uint8Array): DecodeResult {
  const start = { line: 1, col: 1 };
  if (bytes.length > MAX_FILE_BYTES) return fail(start, tooLargeMessage(bytes.length));
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return fail(start, 'file is UTF-16 text: save it as UTF-8');
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    const before = new TextDecoder('utf-8').decode(bytes.subarray(0, nul));
    return fail(positionAt(before, before.length), 'binary file (a NUL byte here): expected YAML text');
  }
  try {
    // Strips a UTF-8 byte-order mark.
    return { ok: true, text: normaliseLoneCr(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) };
  } catch {
    const lossy = new TextDecoder('utf-8').decode(bytes);
    const bad = lossy.indexOf('\uFFFD');
    return fail(positionAt(lossy, Math.max(0, bad)), 'not valid UTF-8 (the first bad byte is here): save the file as UTF-8');
  }
}

export async function parseSource(bytes: Uint8Array): Promise<ParseSourceResult> {
  const decoded = decodeSource(bytes);
  if (!decoded.ok) return decoded;
  const fast = parseYamlFast(decoded.text);
  if (fast !== undefined) return { ok: true, root: fast };
  const { parseYaml } = await import('./parse-yaml.js');
  return parseYaml(decoded.text);
}
