/** Suggestions for a misspelt key, from the keys allowed where it stands. */

/** Optimal string alignment distance: edits, counting a swap of two neighbours as one. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j]!;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * cols + j] = best;
    }
  }
  return at(rows - 1, cols - 1);
}

/**
 * The allowed key `key` was most likely meant to be: one differing only in case (customerId for
 * customerID), else the nearest within about a third of its length; undefined when none is close.
 */
export function suggestKey(key: string, allowed: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameLetters = allowed.find((candidate) => candidate.toLowerCase() === lower);
  if (sameLetters !== undefined) return sameLetters;
  const limit = Math.max(1, Math.floor(key.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
