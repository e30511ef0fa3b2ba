/**
 * Whether this run is the soak project (`npm run test:soak`, vitest.soak.config.ts), which runs the
 * reliability properties in full; `npm test` runs a few cases of each, so that they are still
 * exercised there. ORGFORM_PROPERTY_RUNS, when set, wins over both.
 */
export const SOAK = process.env.ORGFORM_TEST_SOAK === '1';

/** The number of cases for a property: `full` in the soak project, `quick` in `npm test`. */
export function propertyRuns(full: number, quick: number): number {
  const forced = process.env.ORGFORM_PROPERTY_RUNS;
  if (forced !== undefined && forced !== '') return Number(forced);
  return SOAK ? full : quick;
}
