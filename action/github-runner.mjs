// @ts-check
/**
 * How the action's scripts talk to the GitHub Actions runner: step outputs through $GITHUB_OUTPUT,
 * error annotations, and text from outside (a plan's Markdown holds values read from the service)
 * shown in the log without the runner acting on any workflow command inside it.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';

/** A failure the action explains (a bad input, npm or the API refusing): an annotation, no stack trace. */
export class ActionError extends Error {}

/**
 * Appends `name<<DELIMITER` blocks to $GITHUB_OUTPUT (safe for any value, line breaks included).
 * @param {Record<string, string | undefined>} env
 * @param {Record<string, string>} outputs
 */
export function setOutputs(env, outputs) {
  const file = env.GITHUB_OUTPUT;
  if (!file) throw new Error('GITHUB_OUTPUT is not set: run this as a step of a GitHub Actions job');
  let text = '';
  for (const [name, value] of Object.entries(outputs)) {
    const delimiter = `orgform_${randomUUID()}`;
    text += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  appendFileSync(file, text);
}

/** `::error::` with the message escaped as the runner unescapes it. @param {string} message */
export function errorCommand(message) {
  return annotation('error', message);
}

/** `::warning::`, escaped the same way. @param {string} message */
export function warningCommand(message) {
  return annotation('warning', message).trimEnd();
}

/** @param {'error' | 'warning'} kind @param {string} message */
function annotation(kind, message) {
  return `::${kind} title=orgform::${message.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}\n`;
}

/**
 * `text` folded under `title` (trusted), between ::stop-commands:: and a token drawn at random, so
 * that no line of it is taken as a workflow command.
 * @param {string} title
 * @param {string} text
 */
export function foldUntrusted(title, text) {
  const token = randomUUID();
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return `::group::${title}\n::stop-commands::${token}\n${body}::${token}::\n::endgroup::\n`;
}

/**
 * Runs a step's main function: an ActionError becomes an error annotation and exit code 1, without
 * a stack trace; anything else is a bug and shows its stack.
 * @param {() => void | Promise<void>} main
 */
export async function runStep(main) {
  try {
    await main();
  } catch (err) {
    if (!(err instanceof ActionError)) throw err;
    process.stdout.write(errorCommand(err.message));
    process.exitCode = 1;
  }
}
