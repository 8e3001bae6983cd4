// The captions burned into an export, as an ASS script libass renders: one style per
// caption style, one event per line (or, for the word-highlight styles, per word).
// Pure: given the lines and the frame, this exact document.
import type { CaptionStyle, RenderCaption } from '../../../../crds/contract/programs/render.ts';

/** The shipped font (fonts-dejavu-core); libass finds it through the filter's fontsdir. */
const CAPTION_FONT = 'DejaVu Sans';

/** `font_size` is in pixels of a 1080-line frame, so a 720p export looks the same. */
const FONT_SIZE_REFERENCE_LINES = 1080;

/** ASS colours are &HAABBGGRR (alpha 00 = opaque). */
const COLOURS = {
  white: '&H00FFFFFF',
  black: '&H00000000',
  shadow: '&H80000000',
  box: '&H60000000',
  highlight: '&H0000D7FF',
} as const;

interface StyleLook {
  bold: boolean;
  /** 1: outline and shadow; 3: an opaque box behind the text (libass fills it with the outline colour). */
  borderStyle: 1 | 3;
  /** Outline width (or box padding) and shadow depth, as fractions of the font size. */
  outline: number;
  shadow: number;
  primary: string;
  /** Karaoke: the colour of words not yet sung. */
  secondary: string;
  outlineColour: string;
}

const LOOKS: Record<CaptionStyle, StyleLook> = {
  classic: { bold: false, borderStyle: 1, outline: 0.06, shadow: 0.03, primary: COLOURS.white, secondary: COLOURS.white, outlineColour: COLOURS.black },
  bold: { bold: true, borderStyle: 1, outline: 0.12, shadow: 0.05, primary: COLOURS.white, secondary: COLOURS.white, outlineColour: COLOURS.black },
  boxed: { bold: false, borderStyle: 3, outline: 0.2, shadow: 0, primary: COLOURS.white, secondary: COLOURS.white, outlineColour: COLOURS.box },
  highlight: { bold: true, borderStyle: 1, outline: 0.1, shadow: 0.04, primary: COLOURS.white, secondary: COLOURS.white, outlineColour: COLOURS.black },
  karaoke: { bold: true, borderStyle: 1, outline: 0.1, shadow: 0.04, primary: COLOURS.highlight, secondary: COLOURS.white, outlineColour: COLOURS.black },
};

export interface CaptionFrame {
  width: number;
  height: number;
  style: CaptionStyle;
  fontSize: number;
}

/** ASS time: H:MM:SS.cc. */
export function assTime(ms: number): string {
  const centiseconds = Math.max(0, Math.round(ms / 10));
  const hours = Math.floor(centiseconds / 360_000);
  const minutes = Math.floor((centiseconds % 360_000) / 6000);
  const seconds = Math.floor((centiseconds % 6000) / 100);
  const rest = centiseconds % 100;
  return `${hours}:${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}.${String(rest).padStart(2, '0')}`;
}

/**
 * Caption text is plain text: braces would open override blocks, backslashes start tags, and
 * any control character or line separator (the api's `oneLine` rule, api/src/interchange/line-text.ts)
 * could end the event line.
 */
export function assText(text: string): string {
  return text.replace(/\\/g, '\u29F5').replace(/\{/g, '(').replace(/\}/g, ')').replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

function styleLine(frame: CaptionFrame): string {
  const look = LOOKS[frame.style];
  const size = Math.max(1, Math.round((frame.fontSize * frame.height) / FONT_SIZE_REFERENCE_LINES));
  const outline = Math.max(look.borderStyle === 3 ? 1 : 0, Math.round(size * look.outline));
  const shadow = Math.round(size * look.shadow);
  const marginH = Math.round(frame.width * 0.06);
  // Vertical video keeps captions above the platforms' own buttons and titles.
  const marginV = Math.round(frame.height * (frame.height > frame.width ? 0.18 : 0.08));
  return [
    'Style: Caption',
    CAPTION_FONT,
    size,
    look.primary,
    look.secondary,
    look.outlineColour,
    COLOURS.shadow,
    look.bold ? -1 : 0,
    0, 0, 0, 100, 100, 0, 0,
    look.borderStyle,
    outline,
    shadow,
    2,
    marginH,
    marginH,
    marginV,
    1,
  ].join(',');
}

function dialogue(startMs: number, endMs: number, text: string): string {
  return `Dialogue: 0,${assTime(startMs)},${assTime(endMs)},Caption,,0,0,0,,${text}`;
}

/** Words clipped to their line and in order; the word-highlight styles need at least one. */
function timedWords(caption: RenderCaption): RenderCaption['words'] {
  return caption.words
    .map((word) => ({ ...word, outStartMs: Math.max(caption.outStartMs, word.outStartMs), outEndMs: Math.min(caption.outEndMs, word.outEndMs) }))
    .filter((word) => word.outEndMs > word.outStartMs)
    .sort((a, b) => a.outStartMs - b.outStartMs);
}

/** Karaoke: one event whose words fill with the sung colour as they are spoken (\kf durations in centiseconds). */
function karaokeEvent(caption: RenderCaption, words: RenderCaption['words']): string {
  const cs = (ms: number): number => Math.round((ms - caption.outStartMs) / 10);
  let cursor = 0;
  const parts: string[] = [];
  words.forEach((word, index) => {
    const start = cs(word.outStartMs);
    const end = Math.max(start, cs(word.outEndMs));
    if (start > cursor) parts.push(`{\\k${start - cursor}}`);
    parts.push(`{\\kf${end - Math.max(cursor, start)}}${assText(word.text)}${index < words.length - 1 ? ' ' : ''}`);
    cursor = Math.max(cursor, end);
  });
  return dialogue(caption.outStartMs, caption.outEndMs, parts.join(''));
}

/** Highlight: the line shown once per word, that word coloured, from its start to the next word's. */
function highlightEvents(caption: RenderCaption, words: RenderCaption['words']): string[] {
  const events: string[] = [];
  const first = words[0];
  if (first && first.outStartMs > caption.outStartMs) events.push(dialogue(caption.outStartMs, first.outStartMs, words.map((word) => assText(word.text)).join(' ')));
  words.forEach((word, index) => {
    const until = words[index + 1]?.outStartMs ?? caption.outEndMs;
    const text = words
      .map((other, otherIndex) => (otherIndex === index ? `{\\c${COLOURS.highlight}&}${assText(other.text)}{\\r}` : assText(other.text)))
      .join(' ');
    events.push(dialogue(word.outStartMs, Math.max(until, word.outStartMs + 10), text));
  });
  return events;
}

/** The whole ASS document for a frame of width × height. */
export function captionsAss(frame: CaptionFrame, captions: readonly RenderCaption[]): string {
  const events = [...captions]
    .filter((caption) => caption.outEndMs > caption.outStartMs)
    .sort((a, b) => a.outStartMs - b.outStartMs)
    .flatMap((caption) => {
      const words = timedWords(caption);
      if (words.length > 0 && frame.style === 'karaoke') return [karaokeEvent(caption, words)];
      if (words.length > 0 && frame.style === 'highlight') return highlightEvents(caption, words);
      return [dialogue(caption.outStartMs, caption.outEndMs, assText(caption.text))];
    });
  return [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${frame.width}`,
    `PlayResY: ${frame.height}`,
    'WrapStyle: 0',
    'ScaledBorderAndShadow: yes',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    styleLine(frame),
    '',
    '[Events]',
    'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text',
    ...events,
    '',
  ].join('\n');
}
