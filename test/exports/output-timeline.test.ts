import { expect } from 'chai';
import { censoredWordTest } from '../../api/src/exports/censored-words.ts';
import { outputTimeline } from '../../api/src/exports/output-timeline.ts';
import { downloadFilename, resolveSettings } from '../../api/src/exports/service.ts';
import { timelineOf, type EditSpan, type KnownTimeline } from '../../api/src/timeline/timeline.ts';

const piece = (canvasId: string, durationMs: number, sourceStartMs = 0) => ({ canvasId, type: 'SINGLE' as const, mediaItemId: `item-${canvasId}`, mediaFileId: `file-${canvasId}`, sourceStartMs, durationMs });
const known = (...pieces: ReturnType<typeof piece>[]) => timelineOf(pieces) as KnownTimeline;
const cut = (id: string, startMs: number, endMs: number, active = true): EditSpan => ({ id, type: 'silence', startMs, endMs, active });

describe('exports: from the timeline to the rendered output', () => {
  it('the output plays the kept segments end to end, each from its source', () => {
    const output = outputTimeline(known(piece('a', 10_000), piece('b', 5_000, 2_000)), [cut('c1', 2_000, 3_000), cut('c2', 9_000, 11_000)], {}, []);
    expect(output.segments).to.deep.equal([
      { mediaFileId: 'file-a', sourceStartMs: 0, sourceEndMs: 2_000, outStartMs: 0, inserted: false },
      { mediaFileId: 'file-a', sourceStartMs: 3_000, sourceEndMs: 9_000, outStartMs: 2_000, inserted: false },
      { mediaFileId: 'file-b', sourceStartMs: 3_000, sourceEndMs: 7_000, outStartMs: 8_000, inserted: false },
    ]);
    expect(output.durationMs).to.equal(12_000);
  });

  it('overrides are applied before cutting (a cut turned off keeps its time, a moved one cuts where it moved)', () => {
    const edits = [cut('c1', 2_000, 3_000), cut('c2', 5_000, 6_000)];
    const output = outputTimeline(known(piece('a', 10_000)), edits, { c1: { active: false }, c2: { start_ms: 4_000 } }, []);
    expect(output.segments.map((s) => [s.sourceStartMs, s.sourceEndMs])).to.deep.equal([[0, 4_000], [6_000, 10_000]]);
  });

  it('an inserted asset splits the segment it lands in and pushes what follows', () => {
    const output = outputTimeline(known(piece('a', 10_000)), [cut('c1', 1_000, 2_000)], {}, [{ mediaFileId: 'file-broll', atMs: 5_000, durationMs: 3_000, assetOffsetMs: 500 }]);
    expect(output.segments).to.deep.equal([
      { mediaFileId: 'file-a', sourceStartMs: 0, sourceEndMs: 1_000, outStartMs: 0, inserted: false },
      { mediaFileId: 'file-a', sourceStartMs: 2_000, sourceEndMs: 5_000, outStartMs: 1_000, inserted: false },
      { mediaFileId: 'file-broll', sourceStartMs: 500, sourceEndMs: 3_500, outStartMs: 4_000, inserted: true },
      { mediaFileId: 'file-a', sourceStartMs: 5_000, sourceEndMs: 10_000, outStartMs: 7_000, inserted: false },
    ]);
    expect(output.durationMs).to.equal(12_000);
  });

  it('an insert inside a cut plays where the cut was; one at the very end plays last', () => {
    const output = outputTimeline(known(piece('a', 6_000)), [cut('c1', 2_000, 4_000)], {}, [
      { mediaFileId: 'file-x', atMs: 3_000, durationMs: 1_000, assetOffsetMs: 0 },
      { mediaFileId: 'file-y', atMs: 6_000, durationMs: 500, assetOffsetMs: 0 },
    ]);
    expect(output.segments.map((s) => [s.mediaFileId, s.outStartMs])).to.deep.equal([['file-a', 0], ['file-x', 2_000], ['file-a', 3_000], ['file-y', 5_000]]);
  });

  it('a timeline span lands in the output: shortened by the cuts inside it, gone when wholly cut, after an insert at its start', () => {
    const output = outputTimeline(known(piece('a', 10_000)), [cut('c1', 2_000, 4_000)], {}, [{ mediaFileId: 'file-x', atMs: 6_000, durationMs: 1_000, assetOffsetMs: 0 }]);
    expect(output.spanToOutput(1_000, 5_000)).to.deep.equal({ outStartMs: 1_000, outEndMs: 3_000 });
    expect(output.spanToOutput(2_500, 3_500)).to.equal(null);
    expect(output.spanToOutput(6_000, 7_000)).to.deep.equal({ outStartMs: 5_000, outEndMs: 6_000 });
    expect(output.spanToOutput(5_000, 6_000)).to.deep.equal({ outStartMs: 3_000, outEndMs: 4_000 });
  });

  it('the whole timeline cut leaves no segment', () => {
    expect(outputTimeline(known(piece('a', 3_000)), [cut('c1', 0, 3_000)], {}, []).segments).to.deep.equal([]);
  });
});

describe('exports: settings, file name and censored words', () => {
  it('defaults are exactly the spec tables (flips false; audio normalize false, -14 LUFS, noise reduction false, -25 dB floor, volume 100)', () => {
    const settings = resolveSettings({}, null);
    expect(settings).to.deep.include({ video_flip_h: false, video_flip_v: false, audio_censorship: 'none', letterbox_background: '#000000', resolution: '1080p', aspect_ratio: '16:9', crop: null, edit_overrides: {} });
    expect(settings.audio).to.deep.equal({ normalize: false, target_lufs: -14.0, noise_reduction: false, noise_floor: -25.0, main_volume_percent: 100 });
    expect(settings.captions).to.deep.equal({ enabled: false, style: 'classic', font_size: 48 });
  });

  it("a draft supplies overrides, resolution, aspect and crop; the request's own fields win", () => {
    const draft = { editOverrides: { e: { active: false } }, exportSettings: { resolution: '720p' as const, aspect_ratio: '9:16' as const, crop_enabled: true, crop_zoom: 2, crop_pan_x: 0.5, crop_pan_y: -1 } };
    const settings = resolveSettings({ aspect_ratio: '1:1', audio: { normalize: true } }, draft);
    expect(settings).to.deep.include({ resolution: '720p', aspect_ratio: '1:1', edit_overrides: { e: { active: false } }, crop: { zoom: 2, pan_x: 0.5, pan_y: -1 } });
    expect(settings.audio).to.deep.include({ normalize: true, target_lufs: -14.0 });
  });

  it('the download file name says project, export, resolution and aspect, and is safe on every file system', () => {
    expect(downloadFilename({ name: 'My Talk' }, 'Final cut', { resolution: '1080p', aspect_ratio: '9:16' })).to.equal('My Talk - Final cut - 1080p 9x16.mp4');
    expect(downloadFilename({ name: 'a/b:c' }, 'x"y\u0000z', { resolution: '720p', aspect_ratio: '16:9' })).to.equal('a b c - x y z - 720p 16x9.mp4');
    expect(downloadFilename({ name: 'Same' }, 'Same', { resolution: '720p', aspect_ratio: '1:1' })).to.equal('Same - 720p 1x1.mp4');
  });

  it('censored words match per language, ignoring case, accents and punctuation; ordinary words never match', () => {
    const en = censoredWordTest('en');
    expect(['Fuck,', 'shitty', 'BULLSHIT!'].every(en)).to.equal(true);
    expect(['hello', 'class', 'Scunthorpe', 'assess'].some(en)).to.equal(false);
    const pt = censoredWordTest('pt-BR');
    expect(pt('Caralho!')).to.equal(true);
    expect(pt('fuck')).to.equal(false);
    expect(censoredWordTest('es')('cabrón')).to.equal(true);
    expect(censoredWordTest(null)('mierda')).to.equal(true);
  });
});
