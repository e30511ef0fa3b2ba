#!/usr/bin/env node
// Prints a fresh token from a running `orgform emulator` (POST /__emulator/tokens), so that it can
// serve as a token command:
//   ORGFORM_TOKEN_COMMAND="node scripts/emulator-token.mjs http://127.0.0.1:4010"
// Usage: node scripts/emulator-token.mjs [URL] [USER]
//   URL   the emulator (default $ORGFORM_BASE_URL)
//   USER  a token or e-mail address of the user (default $ORGFORM_EMULATOR_USER, else the first user)

const [urlArg, userArg] = process.argv.slice(2);
const base = urlArg ?? process.env.ORGFORM_BASE_URL;
const user = userArg ?? process.env.ORGFORM_EMULATOR_USER;

if (!base) {
  process.stderr.write('emulator-token: give the emulator URL as an argument or in ORGFORM_BASE_URL\n');
  process.exit(2);
}

try {
  const response = await fetch(new URL('/__emulator/tokens', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: user === undefined || user === '' ? '' : JSON.stringify({ user }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let token;
  try {
    token = JSON.parse(text).token;
  } catch {
    token = undefined;
  }
  if (!response.ok || typeof token !== 'string') {
    process.stderr.write(`emulator-token: ${base} answered ${response.status}: ${text.slice(0, 200)}\n`);
    process.exit(1);
  }
  process.stdout.write(`${token}\n`);
} catch (err) {
  process.stderr.write(`emulator-token: cannot reach ${base}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
