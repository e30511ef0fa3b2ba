// The page behaviours the rate-limited goal cases (rate, shards) run on, so that no tuning fits one
// service only (issue 35): the emulator as it always was (pages as asked, a bucket of ceil(rps / 4)),
// and the independent service the issue measured (pages of a fixed 100 whatever is asked, a bucket
// of 12). Both answer 429 at once with Retry-After: 1 and no rate-limit headers.

/** `servedPage`: the most organisations a page holds (the client asks for 500). */
export const SERVICE_PROFILES = [
  { name: 'pages as asked', servedPage: 500, emulatorArgs: (rps) => ['--rate-limit', String(rps)] },
  { name: 'fixed-100, burst 12', servedPage: 100, emulatorArgs: (rps) => ['--rate-limit', `${rps}:12`, '--point', 'page-size=fixed-100'] },
];

/** The profiles `ORGFORM_BENCH_PROFILES` names (comma-separated, matched by prefix), all by default. */
export function chosenProfiles(env = process.env) {
  const wanted = (env.ORGFORM_BENCH_PROFILES ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  if (wanted.length === 0) return SERVICE_PROFILES;
  const chosen = SERVICE_PROFILES.filter((p) => wanted.some((w) => p.name.startsWith(w)));
  if (chosen.length === 0) throw new Error(`ORGFORM_BENCH_PROFILES names no profile (${SERVICE_PROFILES.map((p) => JSON.stringify(p.name)).join(', ')})`);
  return chosen;
}
