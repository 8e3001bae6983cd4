/**
 * Text written into a line-based file (CMX 3600 EDL, SRT, WebVTT, chapter lists) or into
 * XML. Every control character — C0 (CR, LF, tab, vertical tab, form feed, NUL…), DEL and
 * C1 (NEL among them) — and the Unicode line and paragraph separators are characters some
 * reader takes for the end of a line (or, in XML 1.0, refuses outright); user text (an
 * edit's reason, a file name, `media_root`, a caption) must never start a line of its own.
 */
const CONTROL_OR_SEPARATOR = /[\p{Cc}\u2028\u2029]+/gu;
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;

/** `text` on one line: each run of control characters or separators becomes one space. */
export function oneLine(text: string): string {
  return text.replace(CONTROL_OR_SEPARATOR, ' ');
}

/**
 * A text the user broke into lines (a caption on two lines), as those lines: each made one
 * line by `oneLine`, trimmed, blank ones dropped (a blank line ends a subtitle cue).
 */
export function textLines(text: string): string[] {
  return text
    .split(LINE_BREAK)
    .map((line) => oneLine(line).trim())
    .filter((line) => line !== '');
}
