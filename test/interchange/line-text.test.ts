import { expect } from 'chai';
import { writeTimeline } from '../../api/src/interchange/formats.ts';
import type { InterchangeDocument } from '../../api/src/interchange/document.ts';
import { chapterList, srt, vtt } from '../../api/src/interchange/sidecars.ts';
import { oneLine, textLines } from '../../api/src/interchange/line-text.ts';
import { assText } from '../../job-images/ffmpeg/src/render/captions-ass.ts';

/** Every C0 and C1 control character, DEL, and the Unicode line and paragraph separators. */
const CONTROLS = [...Array.from({ length: 0x20 }, (_, code) => code), ...Array.from({ length: 0x21 }, (_, code) => 0x7f + code), 0x2028, 0x2029].map((code) => String.fromCharCode(code));
const ANY_CONTROL = /[\p{Cc}\u2028\u2029]/u;

function documentWith(text: string): InterchangeDocument {
  return {
    name: `Talk${text}`,
    rate: { num: 25, den: 1 },
    width: 640,
    height: 360,
    duration: 50,
    sources: [{ id: 's1', shownId: 's1', name: `talk${text}.mp4`, reference: `/media${text}/talk.mp4`, kind: 'video', hasAudio: true, width: 640, height: 360, rate: { num: 25, den: 1 }, durationFrames: 50 }],
    clips: [{ sourceId: 's1', sourceIn: 0, recordIn: 0, duration: 50, track: 'main', hasVideo: true, hasAudio: true }],
    markers: [{ at: 10, duration: 1, type: 'silence', reason: `pause${text}`, state: 'applied', editId: 'e1' }],
    chapters: [{ at: 0, title: `Intro${text}` }],
    unexpressed: [],
  };
}

describe('line-based writers: no text writes a line of its own (issue 41 L3)', () => {
  it('attack: each control character in a reason, a file name, media_root or a title adds no EDL line and no event', () => {
    const clean = writeTimeline('edl', documentWith('')).content.split('\r\n');
    for (const control of CONTROLS) {
      const injected = `${control}002  AX001    V     C        00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:00${control}`;
      const lines = writeTimeline('edl', documentWith(injected)).content.split('\r\n');
      const label = `U+${control.charCodeAt(0).toString(16).padStart(4, '0')}`;
      expect(lines, label).to.have.lengthOf(clean.length);
      expect(lines.filter((line) => /^\d{3} /.test(line)), label).to.have.lengthOf(2);
      for (const line of lines) expect(line, label).not.to.match(ANY_CONTROL);
    }
  });

  it('attack: each control character in a caption adds no cue and no timing line to SRT or WebVTT, and no line to the chapter list or the burned-in captions', () => {
    for (const control of CONTROLS) {
      const label = `U+${control.charCodeAt(0).toString(16).padStart(4, '0')}`;
      const text = `hello${control}${control}2${control}00:00:05,000 --> 00:00:06,000${control}evil`;
      const cues = [{ outStartMs: 0, outEndMs: 1000, text }];
      for (const file of [srt(cues), vtt(cues)]) {
        expect(file.split('\n').filter((line) => line.includes('-->')), label).to.have.lengthOf(1);
        expect(file.replace(/\n/g, ''), label).not.to.match(ANY_CONTROL);
        expect(file.trimEnd().split('\n\n'), label).to.have.lengthOf(file.startsWith('WEBVTT') ? 2 : 1);
      }
      expect(chapterList([{ outMs: 0, title: `Intro${control}00:10 Second` }], 60_000).trimEnd().split('\n'), label).to.have.lengthOf(1);
      expect(assText(text), label).not.to.match(ANY_CONTROL);
    }
  });

  it('a caption the user broke on two lines keeps its two lines; blank ones go', () => {
    expect(textLines('first line\r\n\r\n  second line \u2028')).to.deep.equal(['first line', 'second line']);
    expect(srt([{ outStartMs: 0, outEndMs: 1000, text: 'first\nsecond' }])).to.equal('1\n00:00:00,000 --> 00:00:01,000\nfirst\nsecond\n');
    expect(oneLine('a\r\n\tb\u0085c')).to.equal('a b c');
  });
});
