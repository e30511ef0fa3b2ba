/**
 * How the GitHub Actions runner reads workflow commands from a step's output, ported line for line
 * from actions/runner so that tests can replay orgform's output through it:
 *
 * - src/Runner.Common/ActionCommand.cs: TryParseV2 (`::command k=v,k=v::data`, only at the start of
 *   a line after TrimStart), TryParse (the legacy `##[command k=v;]data`, found ANYWHERE in a line),
 *   and their unescaping;
 * - src/Runner.Worker/ActionCommandManager.cs: TryProcessCommand tries V2, then V1, for registered
 *   commands only; `stop-commands` pauses everything until its token comes back as a command.
 *
 * Both stdout and stderr go through the same manager (Handlers/ScriptHandler.cs), so a test replays
 * each stream, or both.
 *
 * One departure, on the strict side: the runner compares with StartsWith and IndexOf without a
 * StringComparison, which are culture-sensitive, and under ICU's collation zero-width, format and
 * most control characters are ignored. Whether a given runner does so depends on its globalization
 * mode, so the port assumes it does: those characters are taken out of a line before it is read.
 */

export interface RunnerCommand {
  command: string;
  properties: Record<string, string>;
  data: string;
}

/** The command extensions the runner registers, plus stop-commands (ActionCommandManager's constructor). */
const REGISTERED = ['set-env', 'set-output', 'save-state', 'add-mask', 'add-path', 'add-matcher', 'remove-matcher', 'debug', 'warning', 'error', 'notice', 'group', 'endgroup', 'echo', 'stop-commands'];

function unescape(text: string, mappings: ReadonlyArray<readonly [string, string]>): string {
  let out = text;
  for (const [token, replacement] of mappings) out = out.split(replacement).join(token);
  return out;
}

// The runner's tables, in the runner's order (it replaces `%25` last).
const DATA: ReadonlyArray<readonly [string, string]> = [['\r', '%0D'], ['\n', '%0A'], ['%', '%25']];
const PROPERTY: ReadonlyArray<readonly [string, string]> = [['\r', '%0D'], ['\n', '%0A'], [':', '%3A'], [',', '%2C'], ['%', '%25']];
const LEGACY: ReadonlyArray<readonly [string, string]> = [[';', '%3B'], ['\r', '%0D'], ['\n', '%0A'], [']', '%5D'], ['%', '%25']];

function parseV2(line: string, registered: ReadonlySet<string>): RunnerCommand | undefined {
  const message = line.trimStart();
  if (!message.startsWith('::')) return undefined;
  const end = message.indexOf('::', 2);
  if (end < 0) return undefined;
  const info = message.slice(2, end);
  const space = info.indexOf(' ');
  const command = space < 0 ? info : info.slice(0, space);
  if (!registered.has(command)) return undefined;
  const properties: Record<string, string> = {};
  if (space > 0) {
    for (const pair of info.slice(space + 1).trim().split(',').filter(Boolean)) {
      const at = pair.indexOf('=');
      if (at > 0 && at < pair.length - 1) properties[pair.slice(0, at)] = unescape(pair.slice(at + 1), PROPERTY);
    }
  }
  return { command, properties, data: unescape(message.slice(end + 2), DATA) };
}

function parseV1(line: string, registered: ReadonlySet<string>): RunnerCommand | undefined {
  const prefix = line.indexOf('##[');
  if (prefix < 0) return undefined;
  const rb = line.indexOf(']', prefix);
  if (rb < 0) return undefined;
  const info = line.slice(prefix + 3, rb);
  const space = info.indexOf(' ');
  const command = space < 0 ? info : info.slice(0, space);
  if (!registered.has(command)) return undefined;
  const properties: Record<string, string> = {};
  if (space > 0) {
    for (const pair of info.slice(space + 1).split(';').filter(Boolean)) {
      const at = pair.indexOf('=');
      if (at > 0 && at < pair.length - 1) properties[pair.slice(0, at)] = unescape(pair.slice(at + 1), LEGACY);
    }
  }
  return { command, properties, data: unescape(line.slice(rb + 1), LEGACY) };
}

// Default-ignorable and format characters, and the controls other than tab, line breaks, VT and FF.
const IGNORED = /[\p{Default_Ignorable_Code_Point}\p{Cf}\u0000-\u0008\u000e-\u001f\u007f-\u009f]/gu;

/** Every command the runner would act on, in order, with stop-commands honoured. */
export function runnerCommands(output: string): RunnerCommand[] {
  const registered = new Set(REGISTERED);
  const acted: RunnerCommand[] = [];
  let stopToken: string | undefined;
  // The runner reads the output with StreamReader.ReadLine: \r, \n and \r\n all end a line.
  for (const line of output.split(/\r\n|\r|\n/)) {
    const seen = line.replace(IGNORED, '');
    if (seen === '') continue;
    const command = parseV2(seen, registered) ?? parseV1(seen, registered);
    if (command === undefined) continue;
    if (stopToken !== undefined) {
      if (command.command.toLowerCase() === stopToken.toLowerCase()) {
        registered.delete(stopToken);
        stopToken = undefined;
        acted.push(command);
      }
      continue;
    }
    if (command.command === 'stop-commands') {
      stopToken = command.data;
      registered.add(stopToken);
    }
    acted.push(command);
  }
  return acted;
}

/** The annotations (error, warning, notice) among them. */
export function runnerAnnotations(output: string): RunnerCommand[] {
  return runnerCommands(output).filter((c) => c.command === 'error' || c.command === 'warning' || c.command === 'notice');
}
