// Numbers, paths and colours written the way ffmpeg's options, filter graphs and concat
// scripts read them (and a command line the way a shell does).
import type { Rational } from './probe.ts';

/** Seconds as ffmpeg reads them: rounded to `decimals` (microseconds unless said), trailing zeros dropped. */
export function secondsText(seconds: number, decimals = 6): string {
  const scale = 10 ** decimals;
  const fixed = (Math.round(seconds * scale) / scale).toFixed(decimals);
  return fixed.replace(/\.?0+$/, '') || '0';
}

/** Whole microseconds as seconds with all six decimals (concat durations, seeks onto one timestamp). */
export const microsecondsText = (micros: number): string => (micros / 1e6).toFixed(6);

/** A frame rate as `num/den`, or the integer when den is 1. */
export const rateText = (rate: Rational): string => (rate.den === 1 ? String(rate.num) : `${rate.num}/${rate.den}`);

/** The colour `#rrggbb` as ffmpeg's 0xRRGGBB. */
export const ffmpegColour = (hex: string): string => `0x${hex.slice(1).toUpperCase()}`;

/**
 * A path as a filter option value: the option parser's own separators escaped, quoted
 * for the graph parser. Null for a path with a quote, which neither can take (work paths never hold one).
 */
export function filterPath(path: string): string | null {
  if (path.includes("'")) return null;
  return `'${path.replace(/\\/g, '\\\\').replace(/:/g, '\\:')}'`;
}

/** In single quotes, as a shell and ffmpeg's concat script read them (a quote inside becomes '\''). */
export const singleQuoted = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** A command for people (benchmarks print the render's): quoted where a shell would need it. */
export function commandLine(tool: string, args: readonly string[]): string {
  return [tool, ...args].map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : singleQuoted(arg))).join(' ');
}
