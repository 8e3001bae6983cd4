import { expect } from 'chai';
import { censoredWordTest } from '../../api/src/exports/censored-words.ts';
import { downloadFilename, resolveSettings } from '../../api/src/exports/service.ts';

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
