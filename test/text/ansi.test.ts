import { describe, expect, it } from 'vitest';
import type { OutputStream } from '../../src/cli-io.js';
import { readColorSettings } from '../../src/cli/output-settings.js';
import { useColor as decideColor } from '../../src/text/ansi.js';

const io = (env: Record<string, string>, tty = false) => ({ env, stdout: { write: () => true, isTTY: tty } });
/** The decision for standard output (or `stream`), with the colour settings read from `env`. */
const useColor = (flags: { color?: boolean }, world: ReturnType<typeof io>, stream: OutputStream = world.stdout) => decideColor(flags, readColorSettings(world.env), stream);

describe('useColor', () => {
  it('colours a terminal only, unless NO_COLOR or --no-color', () => {
    expect(useColor({}, io({}, true))).toBe(true);
    expect(useColor({}, io({}, false))).toBe(false);
    expect(useColor({ color: false }, io({}, true))).toBe(false);
    expect(useColor({}, io({ NO_COLOR: '1' }, true))).toBe(false);
    expect(useColor({}, io({ NO_COLOR: '' }, true))).toBe(true);
  });

  it('colours a log when FORCE_COLOR says so, as Node reads it, unless --no-color', () => {
    expect(useColor({}, io({ FORCE_COLOR: '1' }, false))).toBe(true);
    expect(useColor({}, io({ FORCE_COLOR: '' }, false))).toBe(true);
    expect(useColor({}, io({ FORCE_COLOR: '3', NO_COLOR: '1' }, false))).toBe(true);
    expect(useColor({}, io({ FORCE_COLOR: '0' }, true))).toBe(false);
    expect(useColor({}, io({ FORCE_COLOR: 'false' }, true))).toBe(false);
    expect(useColor({ color: false }, io({ FORCE_COLOR: '1' }, true))).toBe(false);
  });

  it('does not colour a dumb terminal, and asks the stream it is given', () => {
    expect(useColor({}, io({ TERM: 'dumb' }, true))).toBe(false);
    expect(useColor({}, io({}, true), { write: () => true, isTTY: false })).toBe(false);
  });
});
