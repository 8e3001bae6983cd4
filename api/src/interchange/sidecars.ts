/**
 * Files that travel beside the edited video, all in output time: SRT and WebVTT cues,
 * the word-level transcript, and YouTube chapters. Pure.
 */
import { oneLine, textLines } from './line-text.ts';

export interface OutputCue {
  outStartMs: number;
  outEndMs: number;
  text: string;
}

export interface OutputWord {
  word: string;
  outStartMs: number;
  outEndMs: number;
  /** Where the word was said in the project's timeline (before the cuts). */
  timelineStartMs: number;
  timelineEndMs: number;
}

export const captionFormats = ['srt', 'vtt', 'words', 'chapters'] as const;
export type CaptionFormat = (typeof captionFormats)[number];

function clock(ms: number, separator: ',' | '.'): string {
  const whole = Math.max(0, Math.round(ms));
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = Math.floor(whole / 1000) % 60;
  const millis = whole % 1000;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}${separator}${String(millis).padStart(3, '0')}`;
}

/**
 * Cue text on the lines the user gave it, never a blank line (it would end the cue), no
 * control character, and no `-->` (a line holding one is a timing line: a cue of its own).
 */
const cueText = (text: string) => textLines(text).join('\n');

export function srt(cues: readonly OutputCue[]): string {
  return cues.map((cue, index) => `${index + 1}\n${clock(cue.outStartMs, ',')} --> ${clock(cue.outEndMs, ',')}\n${cueText(cue.text.replace(/-->/g, '->'))}\n`).join('\n');
}

export function vtt(cues: readonly OutputCue[]): string {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `WEBVTT\n\n${cues.map((cue) => `${clock(cue.outStartMs, '.')} --> ${clock(cue.outEndMs, '.')}\n${cueText(escape(cue.text))}\n`).join('\n')}`;
}

export function wordsDocument(words: readonly OutputWord[], durationMs: number, language: string | null): string {
  return `${JSON.stringify(
    {
      duration_ms: durationMs,
      language,
      words: words.map((word) => ({ word: word.word, start_ms: word.outStartMs, end_ms: word.outEndMs, timeline_start_ms: word.timelineStartMs })),
    },
    null,
    2,
  )}\n`;
}

/** YouTube's rules: the first chapter at 00:00, each at least 10 s long. */
export const MIN_CHAPTER_MS = 10_000;
/** A pause this long in what was said (cut or not) starts a new topic. */
export const CHAPTER_PAUSE_MS = 1500;
const TITLE_WORDS = 6;
const SENTENCE_END = /[.!?]["'”’)\]]*$/u;

export interface Chapter {
  outMs: number;
  title: string;
}

/**
 * Chapters of the edited video: a chapter starts at 00:00 and then at each sentence start
 * that follows a pause of CHAPTER_PAUSE_MS or more in the original speech (where the
 * speaker stopped, even when the silence was cut), once the current chapter has run
 * MIN_CHAPTER_MS and at least MIN_CHAPTER_MS of the video remains. Titled by the
 * sentence's first words. Fewer than three chapters is what YouTube then shows as none.
 */
export function planChapters(words: readonly OutputWord[], durationMs: number): Chapter[] {
  const spoken = words.filter((word) => word.word.trim() !== '');
  if (spoken.length === 0 || durationMs < MIN_CHAPTER_MS) return spoken.length === 0 ? [] : [{ outMs: 0, title: titleFrom(spoken, 0) }];
  const chapters: Chapter[] = [{ outMs: 0, title: titleFrom(spoken, 0) }];
  for (let index = 1; index < spoken.length; index++) {
    const previous = spoken[index - 1]!;
    const word = spoken[index]!;
    const sentenceStart = SENTENCE_END.test(previous.word.trim());
    const pause = word.timelineStartMs - previous.timelineEndMs;
    const at = word.outStartMs;
    if (sentenceStart && pause >= CHAPTER_PAUSE_MS && at - chapters.at(-1)!.outMs >= MIN_CHAPTER_MS && durationMs - at >= MIN_CHAPTER_MS) {
      chapters.push({ outMs: at, title: titleFrom(spoken, index) });
    }
  }
  return chapters;
}

/** The sentence's first words, at most TITLE_WORDS, never past its end. */
function titleFrom(words: readonly OutputWord[], index: number): string {
  const taken: string[] = [];
  for (const word of words.slice(index, index + TITLE_WORDS)) {
    taken.push(word.word.trim());
    if (SENTENCE_END.test(word.word.trim())) break;
  }
  const title = taken.join(' ').replace(/[.!?,;:]+$/u, '');
  return title.charAt(0).toUpperCase() + title.slice(1);
}

/** `00:00 Title` lines (h:mm:ss once the video passes an hour). */
export function chapterList(chapters: readonly Chapter[], durationMs: number): string {
  const stamp = (ms: number) => {
    const seconds = Math.floor(ms / 1000);
    const hms = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60];
    return durationMs >= 3_600_000 ? `${hms[0]}:${String(hms[1]).padStart(2, '0')}:${String(hms[2]).padStart(2, '0')}` : `${String(hms[1]).padStart(2, '0')}:${String(hms[2]).padStart(2, '0')}`;
  };
  return chapters.map((chapter) => `${stamp(chapter.outMs)} ${oneLine(chapter.title)}\n`).join('');
}
