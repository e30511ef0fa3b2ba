/**
 * How long something took or will take, spelled one way everywhere. `precise` (the default) is for
 * what was measured: `120 ms` below a second, `1.2 s` from there. `rounded` is for estimates and
 * what is left before a deadline: `45 s`, `12 min`, `2 h 5 min`.
 */
export function formatDuration(ms: number, style: 'precise' | 'rounded' = 'precise'): string {
  if (style === 'precise') return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}
