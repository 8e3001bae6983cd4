// What loudnorm prints: its JSON block on stderr, read back into the measurement the
// second pass takes (and the normalisation type the result reports).

/** What loudnorm's first pass measured (its print_format=json block). */
export interface LoudnessMeasurement {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

/** The last `{ … }` block loudnorm printed on stderr, parsed; null when there is none. */
export function parseLoudnormReport(stderrLines: readonly string[]): Record<string, string> | null {
  const start = stderrLines.findLastIndex((line) => line.trim() === '{');
  if (start < 0) return null;
  const end = stderrLines.findIndex((line, index) => index > start && line.trim() === '}');
  if (end < 0) return null;
  try {
    return JSON.parse(stderrLines.slice(start, end + 1).join('\n')) as Record<string, string>;
  } catch {
    return null;
  }
}

/** A first-pass report the second pass can use: every measured value a finite number (silence is -inf). */
export function usableMeasurement(report: Record<string, string> | null): LoudnessMeasurement | null {
  if (!report) return null;
  const fields = ['input_i', 'input_tp', 'input_lra', 'input_thresh', 'target_offset'] as const;
  if (!fields.every((field) => Number.isFinite(Number(report[field])))) return null;
  return { input_i: report.input_i ?? '', input_tp: report.input_tp ?? '', input_lra: report.input_lra ?? '', input_thresh: report.input_thresh ?? '', target_offset: report.target_offset ?? '' };
}
