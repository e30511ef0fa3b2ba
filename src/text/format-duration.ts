/**
 * How long something took or will take, spelled one way for each use, all here:
 * - `precise` (the default), for what was measured: `120 ms` below a second, `1.2 s` from there;
 * - `rounded`, for estimates and what is left before a deadline: `45 s`, `12 min`, `2 h 5 min`;
 * - `clock`, for the progress lines' elapsed time and ETA: `45s`, `12m 0s`, `2h 5m`, whole seconds
 *   rounded down as a clock does.
 */
export type DurationStyle = 'precise' | 'rounded' | 'clock';

export function formatDuration(ms: number, style: DurationStyle = 'precise'): string {
  switch (style) {
    case 'precise':
      return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
    case 'rounded': {
      const s = Math.max(0, Math.round(ms / 1000));
      if (s < 60) return `${s} s`;
      const min = Math.round(s / 60);
      if (min < 60) return `${min} min`;
      return `${Math.floor(min / 60)} h ${min % 60} min`;
    }
    case 'clock': {
      const seconds = Math.max(0, Math.floor(ms / 1000));
      if (seconds < 60) return `${seconds}s`;
      if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
      return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
    }
    default: {
      const unreachable: never = style;
      throw new Error(`unknown duration style ${String(unreachable)}`);
    }
  }
}
