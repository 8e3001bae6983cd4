import { expect } from 'chai';
import { renderInputSchema, type RenderRequestInput } from '../../crds/contract/programs/render.ts';
import { assText, assTime, captionsAss } from '../../job-images/ffmpeg/src/render/captions-ass.ts';
import { commandLine } from '../../job-images/ffmpeg/src/media/ffmpeg-text.ts';
import { outputFrameRate } from '../../job-images/ffmpeg/src/render/frame-grid.ts';
import { loudnessApplyArgs, loudnessMeasureArgs } from '../../job-images/ffmpeg/src/render/loudness.ts';
import { parseLoudnormReport, usableMeasurement } from '../../job-images/ffmpeg/src/render/loudnorm-report.ts';
import { planRender, type RenderFiles } from '../../job-images/ffmpeg/src/render/render-plan.ts';
import { RenderPlanError } from '../../job-images/ffmpeg/src/render/render-plan-error.ts';
import { describeMedia, parseFfprobeOutput, type MediaProbe } from '../../job-images/ffmpeg/src/media/probe.ts';

const MOV = 'mov,mp4,m4a,3gp,3g2,mj2';

function videoProbe(overrides: { width?: number; height?: number; rate?: string; duration?: string; audio?: boolean } = {}): MediaProbe {
  const { width = 320, height = 180, rate = '30/1', duration = '8.0', audio = true } = overrides;
  return describeMedia(
    parseFfprobeOutput({
      streams: [
        { index: 0, codec_type: 'video', codec_name: 'h264', width, height, pix_fmt: 'yuv420p', r_frame_rate: rate, avg_frame_rate: rate, time_base: '1/15360' },
        ...(audio ? [{ index: 1, codec_type: 'audio', codec_name: 'aac', channels: 2, sample_rate: '48000' }] : []),
      ],
      format: { format_name: MOV, duration },
    }),
  );
}

const imageProbe = describeMedia(parseFfprobeOutput({ streams: [{ index: 0, codec_type: 'video', codec_name: 'png', width: 200, height: 100 }], format: { format_name: 'png_pipe' } }));

const files: RenderFiles = {
  sources: new Map([
    ['main', '/w/main.mp4'],
    ['logo', '/w/logo.png'],
  ]),
  captions: '/w/captions.ass',
  fontsDir: '/fonts',
  output: '/w/export.mp4',
  intermediateVideo: '/w/picture.mp4',
  intermediateAudio: '/w/sound.wav',
};

const probes = new Map([
  ['main', videoProbe()],
  ['logo', imageProbe],
]);

const baseSettings = {
  resolution: '720p',
  aspectRatio: '16:9',
  letterboxColor: '#00ff00',
  flipH: false,
  flipV: false,
  crop: null,
  audio: { normalize: false, targetLufs: -14, noiseReduction: false, noiseFloorDb: -25, mainVolumePercent: 100 },
  censorship: 'none',
  captions: null,
} as const;

type Overrides = Partial<Omit<RenderRequestInput, 'settings'>> & { settings?: Partial<RenderRequestInput['settings']> };

function input(overrides: Overrides = {}) {
  const { settings, ...rest } = overrides;
  return renderInputSchema.parse({
    export_id: '00000000-0000-4000-8000-000000000000',
    sources: { main: { key: 'k', kind: 'video', durationMs: 8000, hasAudio: true }, logo: { key: 'l', kind: 'image', durationMs: null, hasAudio: false } },
    segments: [
      { sourceId: 'main', sourceStartMs: 500, sourceEndMs: 1500, outStartMs: 0 },
      { sourceId: 'main', sourceStartMs: 2700, sourceEndMs: 3400, outStartMs: 1000 },
    ],
    settings: { ...baseSettings, ...settings },
    watermark: false,
    ...rest,
  });
}

const chainsOf = (graph: string): string[] => graph.split(';');
const AUDIO_FORMAT = 'aresample=48000,aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo';

describe('render plan (as data: given this timeline, this graph)', () => {
  describe('cut-only 16:9', () => {
    const plan = planRender(input(), probes, files);

    it('stretches moving forward through one source are one input: seeked just before the first frame, read a little past the last', () => {
      expect(plan.inputs).to.deep.equal([['-ss', '0.483', '-t', '3.017', '-i', '/w/main.mp4']]);
    });

    it('this exact graph: the read split per segment, frame-exact trims, exact sample counts, a fade only at the cut, one concat, one scale', () => {
      expect(chainsOf(plan.filterGraph)).to.deep.equal([
        '[0:v:0]split=2[in0v0][in0v1]',
        '[0:a:0]asplit=2[in0a0][in0a1]',
        '[in0v0]trim=start=0.000333:end=1.000333,setpts=PTS-STARTPTS,fps=30,format=yuv420p,trim=end_frame=30,setpts=PTS-STARTPTS[v0]',
        `[in0a0]atrim=start=0.017:end=1.017,asetpts=PTS-STARTPTS,${AUDIO_FORMAT},apad=whole_len=48000,atrim=end_sample=48000,afade=t=out:st=0.99:d=0.01[a0]`,
        '[in0v1]trim=start=2.200333:end=2.900333,setpts=PTS-STARTPTS,fps=30,format=yuv420p,trim=end_frame=21,setpts=PTS-STARTPTS[v1]',
        `[in0a1]atrim=start=2.217:end=2.917,asetpts=PTS-STARTPTS,${AUDIO_FORMAT},apad=whole_len=33600,atrim=end_sample=33600,afade=t=in:d=0.01[a1]`,
        '[v0][a0][v1][a1]concat=n=2:v=1:a=1[vcat][acat]',
        '[vcat]scale=1280:720,setsar=1,format=yuv420p[vout]',
        '[acat]anull[aout]',
      ]);
    });

    it('a gap past MAX_DECODED_GAP_SECONDS, or a step back in the source, is reached by seeking a new input', () => {
      const segments = [
        { sourceId: 'main', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 },
        { sourceId: 'main', sourceStartMs: 12_000, sourceEndMs: 13_000, outStartMs: 1000 },
        { sourceId: 'main', sourceStartMs: 11_000, sourceEndMs: 11_500, outStartMs: 2000 },
      ];
      const long = planRender(input({ segments }), new Map([['main', videoProbe({ duration: '20' })]]), files);
      expect(long.inputs).to.deep.equal([
        ['-t', '1.1', '-i', '/w/main.mp4'],
        ['-ss', '11.983', '-t', '1.117', '-i', '/w/main.mp4'],
        ['-ss', '10.983', '-t', '0.617', '-i', '/w/main.mp4'],
      ]);
      expect(long.segments.map((segment) => segment.inputIndex)).to.deep.equal([0, 1, 2]);
    });

    it('a source at another rate is resampled to the output rate, and may repeat its last frame to fill its count', () => {
      const film = new Map([['main', videoProbe()], ['film', videoProbe({ rate: '24/1', width: 640, height: 360 })]]);
      const segments = [
        { sourceId: 'main', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 },
        { sourceId: 'film', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 1000, inserted: true },
      ];
      const plan = planRender(input({ segments }), film, { ...files, sources: new Map([...files.sources, ['film', '/w/film.mp4']]) });
      const chains = chainsOf(plan.filterGraph);
      // sources of different sizes are each fitted before the concat
      expect(chains[0]).to.equal('[0:v:0]trim=start=0:end=0.983333,setpts=PTS-STARTPTS,fps=30,scale=1280:720,setsar=1,format=yuv420p,trim=end_frame=30,setpts=PTS-STARTPTS[v0]');
      expect(chains[2]).to.equal(
        '[1:v:0]trim=start=0:end=0.983333,setpts=PTS-STARTPTS,fps=30,scale=1280:720,setsar=1,format=yuv420p,tpad=stop_mode=clone:stop=30,trim=end_frame=30,setpts=PTS-STARTPTS[v1]',
      );
    });

    it('the output is the kept frames on the source frame grid: 30 + 21 frames, 1.7 s, 81 600 samples', () => {
      expect(plan).to.include({ width: 1280, height: 720, frameCount: 51, durationSeconds: 1.7, audioSamples: 81_600 });
      expect(plan.frameRate).to.deep.equal({ num: 30, den: 1 });
      expect(plan.segments.map((segment) => [segment.outFirstFrame, segment.frameCount, segment.audioSamples])).to.deep.equal([
        [0, 30, 48_000],
        [30, 21, 33_600],
      ]);
    });

    it('H.264 High yuv420p at the source rate, AAC 48 kHz stereo, faststart MP4', () => {
      expect(plan.renderArgs.slice(plan.renderArgs.indexOf('-map'))).to.deep.equal([
        '-map', '[vout]', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-profile:v', 'high', '-pix_fmt', 'yuv420p', '-r', '30',
        '-map', '[aout]', '-c:a', 'aac', '-b:a', '192k', '-ar', '48000', '-ac', '2',
        '-movflags', '+faststart', '-f', 'mp4', '/w/export.mp4',
      ]);
    });

    it('the command prints as one shell line (for benchmarks)', () => {
      expect(commandLine('ffmpeg', ['-i', '/w/a b.mp4', '-filter_complex', '[0:v]null[v]'])).to.equal("ffmpeg -i '/w/a b.mp4' -filter_complex '[0:v]null[v]'");
    });
  });

  describe('frame grid', () => {
    it('times between frames go to the nearest frame edge (the one frame rule of crds/contract/editing), so segments start and end on whole frames', () => {
      const plan = planRender(input({ segments: [{ sourceId: 'main', sourceStartMs: 510, sourceEndMs: 1490, outStartMs: 0 }] }), probes, files);
      expect(plan.segments[0]).to.include({ frameCount: 30, sourceStartSeconds: 0.5, sourceEndSeconds: 1.5 });
    });

    it("the request's frame rate is the output's, whatever the footage's probe says (the editing core chose it)", () => {
      const plan = planRender(input({ frameRate: { num: 25, den: 1 }, segments: [{ sourceId: 'main', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 }] }), probes, files);
      expect(plan.frameRate).to.deep.equal({ num: 25, den: 1 });
      expect(plan.frameCount).to.equal(25);
    });

    it('NTSC rates stay exact: samples follow the cumulative frame times, so audio never drifts', () => {
      const ntsc = new Map([['main', videoProbe({ rate: '30000/1001' })]]);
      const segments = [
        { sourceId: 'main', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 },
        { sourceId: 'main', sourceStartMs: 2000, sourceEndMs: 3000, outStartMs: 1000 },
      ];
      const plan = planRender(input({ segments }), ntsc, files);
      expect(plan.frameRate).to.deep.equal({ num: 30000, den: 1001 });
      expect(plan.segments.map((segment) => segment.frameCount)).to.deep.equal([30, 30]);
      expect(plan.segments.map((segment) => segment.audioSamples)).to.deep.equal([48_048, 48_048]);
      expect(plan.audioSamples).to.equal(Math.round((60 * 48_000 * 1001) / 30_000));
      expect(plan.renderArgs).to.include('30000/1001');
    });

    it('an unknown or absurd frame rate renders at 30 fps', () => {
      expect(outputFrameRate(input(), new Map([['main', videoProbe({ rate: '0/0' })]]))).to.deep.equal({ num: 30, den: 1 });
      expect(outputFrameRate(input(), new Map([['main', videoProbe({ rate: '90000/1' })]]))).to.deep.equal({ num: 30, den: 1 });
    });

    it('a segment past the end of its source is clamped to the source; one that names no frame is left out', () => {
      const segments = [
        { sourceId: 'main', sourceStartMs: 10, sourceEndMs: 14, outStartMs: 0 },
        { sourceId: 'main', sourceStartMs: 7500, sourceEndMs: 9000, outStartMs: 20 },
      ];
      const plan = planRender(input({ segments }), probes, files);
      expect(plan.segments.map((segment) => [segment.sourceStartSeconds, segment.sourceEndSeconds, segment.frameCount])).to.deep.equal([[7.5, 8, 15]]);
    });

    it('nothing left to render is a plan error', () => {
      expect(() => planRender(input({ segments: [{ sourceId: 'main', sourceStartMs: 10, sourceEndMs: 14, outStartMs: 0 }] }), probes, files)).to.throw(RenderPlanError);
    });

    it('segments that continue each other in the source are no cut: no fade between them', () => {
      const segments = [
        { sourceId: 'main', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 },
        { sourceId: 'main', sourceStartMs: 1000, sourceEndMs: 2000, outStartMs: 1000 },
      ];
      expect(planRender(input({ segments }), probes, files).filterGraph).not.to.include('afade');
    });
  });

  describe('9:16 with a letterbox colour, crop and flips', () => {
    it('a 16:9 source fits the width of a 720×1280 frame, centred on bars of the letterbox colour', () => {
      const plan = planRender(input({ settings: { aspectRatio: '9:16' } }), probes, files);
      expect(chainsOf(plan.filterGraph)).to.include('[vcat]scale=720:406,setsar=1,pad=720:1280:0:437:color=0x00FF00,format=yuv420p[vout]');
      expect(plan).to.include({ width: 720, height: 1280 });
    });

    it('1:1 at 1080p is 1080×1080', () => {
      expect(planRender(input({ settings: { aspectRatio: '1:1', resolution: '1080p' } }), probes, files)).to.include({ width: 1080, height: 1080 });
    });

    it('crop: a window of the output aspect, zoomed and panned, fills the frame (no bars); flips follow the cuts', () => {
      const plan = planRender(input({ settings: { aspectRatio: '9:16', flipH: true, flipV: true, crop: { zoom: 2, panX: -1, panY: 0.5 } } }), probes, files);
      const chains = chainsOf(plan.filterGraph);
      expect(chains.slice(-3, -1)).to.deep.equal(['[vcat]crop=50:90:0:68,scale=720:1280,setsar=1,format=yuv420p[vpost0]', '[vpost0]hflip,vflip[vout]']);
    });

    it('crop centred at zoom 1 on a 16:9 export keeps the whole frame', () => {
      const plan = planRender(input({ settings: { crop: { zoom: 1, panX: 0, panY: 0 } } }), probes, files);
      expect(chainsOf(plan.filterGraph)).to.include('[vcat]crop=320:180:0:0,scale=1280:720,setsar=1,format=yuv420p[vout]');
    });
  });

  describe('inserts', () => {
    const segments = [
      { sourceId: 'main', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 },
      { sourceId: 'logo', sourceStartMs: 0, sourceEndMs: 500, outStartMs: 1000, inserted: true },
      { sourceId: 'main', sourceStartMs: 1000, sourceEndMs: 2000, outStartMs: 1500 },
    ];
    const plan = planRender(input({ segments, settings: { crop: { zoom: 2, panX: 0, panY: 0 } } }), probes, files);

    const chainTo = (label: string): string | undefined => chainsOf(plan.filterGraph).find((chain) => chain.endsWith(label));

    it('an inserted image loops its still for its length, letterboxed (never cropped), with silence', () => {
      expect(plan.inputs[1]).to.deep.equal(['-loop', '1', '-framerate', '30', '-t', '0.516667', '-i', '/w/logo.png']);
      expect(chainTo('[v1]')).to.equal(
        '[1:v:0]setpts=PTS-STARTPTS,scale=1280:640,setsar=1,pad=1280:720:0:40:color=0x00FF00,format=yuv420p,trim=end_frame=15,setpts=PTS-STARTPTS[v1]',
      );
      expect(chainTo('[a1]')).to.equal('anullsrc=r=48000:cl=stereo,aformat=sample_fmts=fltp,atrim=end_sample=24000[a1]');
    });

    it('the footage either side of the insert is one read of its source, split around the insert', () => {
      expect(plan.inputs).to.have.length(2);
      expect(plan.segments.map((segment) => segment.inputIndex)).to.deep.equal([0, 1, 0]);
      expect(chainsOf(plan.filterGraph).slice(0, 2)).to.deep.equal(['[0:v:0]split=2[in0v0][in0v1]', '[0:a:0]asplit=2[in0a0][in0a1]']);
    });

    it('the insert extends the timeline; the footage either side fades at the insert', () => {
      expect(plan.frameCount).to.equal(75);
      expect(plan.segments.map((segment) => segment.outFirstFrame)).to.deep.equal([0, 30, 45]);
      expect(chainTo('[a0]')).to.match(/afade=t=out:st=0\.99:d=0\.01\[a0\]$/);
      expect(chainTo('[a2]')).to.match(/afade=t=in:d=0\.01\[a2\]$/);
    });
  });

  describe('many pieces (ffmpeg inputs follow the distinct sources, not the piece count)', () => {
    it('250 one-second still canvases of one image are one looped input, fitted once before its split, each branch cut to its own frames', () => {
      const segments = Array.from({ length: 250 }, (_, index) => ({ sourceId: 'logo', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: index * 1000 }));
      const plan = planRender(input({ segments }), probes, files);
      expect(plan.inputs).to.deep.equal([['-loop', '1', '-framerate', '30', '-t', '250.016667', '-i', '/w/logo.png']]);
      const chains = chainsOf(plan.filterGraph);
      expect(chains[0]).to.match(/^\[0:v:0\]format=yuv420p,split=250\[in0v0\]\[in0v1\]/);
      expect(chains).to.include('[in0v0]trim=start_frame=0:end_frame=30,setpts=PTS-STARTPTS,format=yuv420p,trim=end_frame=30,setpts=PTS-STARTPTS[v0]');
      expect(chains).to.include('[in0v249]trim=start_frame=7470:end_frame=7500,setpts=PTS-STARTPTS,format=yuv420p,trim=end_frame=30,setpts=PTS-STARTPTS[v249]');
      expect(chains.filter((chain) => chain.includes('scale='))).to.have.length(1);
      expect(plan.frameCount).to.equal(7500);
    });

    it('stills of one image between footage are one input too, letterboxed once before the split (the footage fitted on its own)', () => {
      const segments = [0, 1, 2, 3].map((index) => ({ sourceId: index % 2 === 0 ? 'main' : 'logo', sourceStartMs: index * 1000, sourceEndMs: index * 1000 + 500, outStartMs: index * 500 }));
      const plan = planRender(input({ segments }), probes, files);
      expect(plan.inputs).to.deep.equal([
        ['-t', '2.6', '-i', '/w/main.mp4'],
        ['-loop', '1', '-framerate', '30', '-t', '1.016667', '-i', '/w/logo.png'],
      ]);
      const chains = chainsOf(plan.filterGraph);
      expect(chains).to.include('[1:v:0]scale=1280:640,setsar=1,pad=1280:720:0:40:color=0x00FF00,format=yuv420p,split=2[in1v0][in1v1]');
      expect(chains).to.include('[in1v0]trim=start_frame=0:end_frame=15,setpts=PTS-STARTPTS,format=yuv420p,trim=end_frame=15,setpts=PTS-STARTPTS[v1]');
      expect(chains).to.include('[in1v1]trim=start_frame=15:end_frame=30,setpts=PTS-STARTPTS,format=yuv420p,trim=end_frame=15,setpts=PTS-STARTPTS[v3]');
    });

    it('cuts alternating between two sources, each moving forward, are two inputs however many pieces', () => {
      const sources = {
        main: { key: 'k', kind: 'video', durationMs: 200_000, hasAudio: true },
        other: { key: 'o', kind: 'video', durationMs: 200_000, hasAudio: true },
      } as const;
      const segments = Array.from({ length: 250 }, (_, index) => {
        const start = Math.floor(index / 2) * 1500;
        return { sourceId: index % 2 === 0 ? 'main' : 'other', sourceStartMs: start, sourceEndMs: start + 1000, outStartMs: index * 1000 };
      });
      const twoProbes = new Map([['main', videoProbe({ duration: '200' })], ['other', videoProbe({ duration: '200' })]]);
      const plan = planRender(input({ sources, segments }), twoProbes, { ...files, sources: new Map([['main', '/w/main.mp4'], ['other', '/w/other.mp4']]) });
      expect(plan.inputs).to.deep.equal([
        ['-t', '187.1', '-i', '/w/main.mp4'],
        ['-t', '187.1', '-i', '/w/other.mp4'],
      ]);
      expect(plan.segments.map((segment) => segment.inputIndex)).to.deep.equal(segments.map((_, index) => index % 2));
      const chains = chainsOf(plan.filterGraph);
      expect(chains).to.include('[in1v124]trim=start=185.983333:end=186.983333,setpts=PTS-STARTPTS,fps=30,format=yuv420p,trim=end_frame=30,setpts=PTS-STARTPTS[v249]');
    });
  });

  describe('captions and watermark', () => {
    const captions = [{ outStartMs: 0, outEndMs: 900, text: 'hello world', words: [] }];
    const plan = planRender(input({ captions, settings: { captions: { style: 'classic', fontSize: 54 } }, watermark: true }), probes, files);

    it('captions are an ASS script burned in by libass with the shipped fonts, then the watermark on top', () => {
      expect(chainsOf(plan.filterGraph).slice(-4)).to.deep.equal([
        '[vcat]scale=1280:720,setsar=1,format=yuv420p[vpost0]',
        "[vpost0]ass=filename='/w/captions.ass':fontsdir='/fonts'[vpost1]",
        "[vpost1]drawtext=fontfile='/fonts/DejaVuSans-Bold.ttf':text=Cutroom:fontsize=32:fontcolor=white@0.55:shadowcolor=black@0.275:shadowx=2:shadowy=2:x=w-tw-22:y=h-th-22[vout]",
        '[acat]anull[aout]',
      ]);
      expect(plan.captionsScript).to.include('PlayResX: 1280\nPlayResY: 720');
      expect(plan.captionsScript).to.include('Dialogue: 0,0:00:00.00,0:00:00.90,Caption,,0,0,0,,hello world');
    });

    it('captions enabled with no lines burn nothing', () => {
      const none = planRender(input({ settings: { captions: { style: 'classic', fontSize: 54 } } }), probes, files);
      expect(none.captionsScript).to.equal(null);
      expect(none.filterGraph).not.to.include('ass=');
    });
  });

  describe('audio chain in the spec order: volume, noise reduction, censorship, then loudness', () => {
    const censored = [
      { outStartMs: 500, outEndMs: 800 },
      { outStartMs: 1200, outEndMs: 1300 },
    ];
    const audio = { normalize: true, targetLufs: -16, noiseReduction: true, noiseFloorDb: -30, mainVolumePercent: 50 };

    it('mute: volume first, then afftdn at the noise floor, then the censored words silenced in 10 ms frames', () => {
      const plan = planRender(input({ censored, settings: { audio, censorship: 'mute' } }), probes, files);
      expect(chainsOf(plan.filterGraph).at(-1)).to.equal(
        "[acat]volume=0.5,afftdn=nf=-30,asetnsamples=n=480:p=0,volume=0:enable='between(t,0.5,0.8)+between(t,1.2,1.3)'[aout]",
      );
    });

    it('bleep: the censored words muted and a 1 kHz tone mixed in over exactly those ranges', () => {
      const chains = chainsOf(planRender(input({ censored, settings: { audio, censorship: 'bleep' } }), probes, files).filterGraph);
      expect(chains.slice(-3)).to.deep.equal([
        "[acat]volume=0.5,afftdn=nf=-30,asetnsamples=n=480:p=0,volume=0:enable='between(t,0.5,0.8)+between(t,1.2,1.3)'[amain]",
        `sine=frequency=1000:sample_rate=48000:samples_per_frame=480,${AUDIO_FORMAT},atrim=end_sample=81600,volume=0:enable='not(between(t,0.5,0.8)+between(t,1.2,1.3))'[bleep]`,
        '[amain][bleep]amix=inputs=2:duration=first:dropout_transition=0:normalize=0,atrim=end_sample=81600[aout]',
      ]);
    });

    it('censorship none ignores the censored ranges', () => {
      expect(chainsOf(planRender(input({ censored }), probes, files).filterGraph).at(-1)).to.equal('[acat]anull[aout]');
    });

    it('with normalisation the render pass writes the picture and a float WAV; loudness comes after', () => {
      const plan = planRender(input({ settings: { audio } }), probes, files);
      expect(plan.loudness).to.deep.equal({ targetLufs: -16, loudnessRange: 11, truePeakDb: -1.5 });
      expect(plan.renderArgs.slice(plan.renderArgs.indexOf('-r'))).to.deep.equal([
        '-r', '30', '-an', '-f', 'mp4', '/w/picture.mp4',
        '-map', '[aout]', '-c:a', 'pcm_f32le', '-f', 'wav', '/w/sound.wav',
      ]);
    });

    it('two-pass loudnorm: measure as JSON, then the measured values with linear=true, the picture copied', () => {
      const loudness = { targetLufs: -16, loudnessRange: 11, truePeakDb: -1.5 };
      expect(loudnessMeasureArgs(loudness, '/w/sound.wav').slice(-7)).to.deep.equal([
        '-i', '/w/sound.wav', '-af', 'loudnorm=I=-16:TP=-1.5:LRA=11:print_format=json', '-f', 'null', '-',
      ]);
      const measured = { input_i: '-27.61', input_tp: '-4.47', input_lra: '18.06', input_thresh: '-39.20', target_offset: '0.58' };
      const args = loudnessApplyArgs(loudness, measured, files);
      expect(args).to.include(
        `loudnorm=I=-16:TP=-1.5:LRA=19:measured_I=-27.61:measured_TP=-4.47:measured_LRA=18.06:measured_thresh=-39.20:offset=0.58:linear=true:print_format=json,${AUDIO_FORMAT}`,
      );
      expect(args.slice(args.indexOf('-map'))).to.deep.equal([
        '-map', '0:v:0', '-map', '1:a:0', '-af', args[args.indexOf('-af') + 1], '-c:v', 'copy',
        '-c:a', 'aac', '-b:a', '192k', '-ar', '48000', '-ac', '2', '-movflags', '+faststart', '-f', 'mp4', '/w/export.mp4',
      ]);
    });

    it('silence (measured -inf) is not normalised: the second pass only encodes and muxes', () => {
      const silent = { input_i: '-inf', input_tp: '-inf', input_lra: '0.00', input_thresh: '-70.00', target_offset: 'inf' };
      expect(usableMeasurement(silent)).to.equal(null);
      const args = loudnessApplyArgs({ targetLufs: -16, loudnessRange: 11, truePeakDb: -1.5 }, usableMeasurement(silent), files);
      expect(args[args.indexOf('-af') + 1]).to.equal(AUDIO_FORMAT);
    });

    it("the second pass's report says whether it stayed linear", () => {
      const lines = ['[Parsed_loudnorm_0 @ 0x1] ', '{', '\t"input_i" : "-20.10",', '\t"normalization_type" : "dynamic",', '\t"target_offset" : "0.10"', '}'];
      expect(parseLoudnormReport(lines)).to.deep.equal({ input_i: '-20.10', normalization_type: 'dynamic', target_offset: '0.10' });
      expect(parseLoudnormReport(['no report'])).to.equal(null);
    });
  });

  describe('asset edits', () => {
    const asset = {
      sourceId: 'logo',
      outStartMs: 200,
      outEndMs: 1500,
      assetOffsetMs: 0,
      visualMode: 'overlay',
      audioMode: 'duck',
      position: 'top_right',
      sizePercent: 25,
      opacityPercent: 50,
      x: 0.5,
      y: 0.5,
      flipH: true,
      flipV: false,
      rotationDeg: 90,
      volumePercent: 80,
      duckMain: true,
    } as const;

    it('overlay: sized by the output width, flipped, rotated on transparency, faded to its opacity, placed at its corner on exactly the frames of its span (half a frame either side of their start times)', () => {
      const plan = planRender(input({ assets: [asset] }), probes, files);
      expect(plan.inputs[1]).to.deep.equal(['-loop', '1', '-framerate', '30', '-t', '1.3', '-i', '/w/logo.png']);
      const chains = chainsOf(plan.filterGraph);
      expect(chains).to.include(
        '[1:v:0]setpts=PTS-STARTPTS+0.2/TB,scale=320:-2,setsar=1,hflip,format=rgba,rotate=1.570796:ow=rotw(1.570796):oh=roth(1.570796):c=none,colorchannelmixer=aa=0.5[asset0v]',
      );
      expect(chains).to.include("[vpost0][asset0v]overlay=x=W-w-22:y=22:eof_action=repeat:enable='between(t,0.183333,1.483333)'[vout]");
      expect(plan.assetFrames).to.deep.equal([{ asset: 0, firstFrame: 6, endFrame: 45 }]);
      // an image has no sound; ducking still lowers the main audio under it
      expect(chains.at(-1)).to.equal("[acat]asetnsamples=n=480:p=0,volume=0.25:enable='between(t,0.2,1.5)'[aout]");
    });

    it('custom position centres the overlay on x/y fractions of the frame', () => {
      const chains = chainsOf(planRender(input({ assets: [{ ...asset, position: 'custom', x: 0.25, y: 0.75 }] }), probes, files).filterGraph);
      expect(chains.some((chain) => chain.includes('overlay=x=W*0.25-w/2:y=H*0.75-h/2:'))).to.equal(true);
    });

    it('replace: the asset fills the frame (letterboxed) for its span', () => {
      const chains = chainsOf(planRender(input({ assets: [{ ...asset, visualMode: 'replace', audioMode: 'mute', duckMain: false }] }), probes, files).filterGraph);
      expect(chains).to.include('[1:v:0]setpts=PTS-STARTPTS+0.2/TB,scale=1280:640,setsar=1,pad=1280:720:0:40:color=0x00FF00,format=yuv420p[asset0v]');
      expect(chains).to.include("[vpost0][asset0v]overlay=x=0:y=0:eof_action=repeat:enable='between(t,0.183333,1.483333)'[vout]");
      expect(chains.at(-1)).to.equal('[acat]anull[aout]');
    });

    it('audio mix: the asset from its offset at its volume, delayed to its start, mixed with the main audio without renormalising', () => {
      const clip = describeMedia(parseFfprobeOutput({ streams: [{ index: 0, codec_type: 'audio', codec_name: 'aac', channels: 2 }], format: { format_name: MOV, duration: '5' } }));
      const withClip = new Map([...probes, ['music', clip]]);
      const music = { ...asset, sourceId: 'music', visualMode: 'none', audioMode: 'mix', duckMain: false, assetOffsetMs: 1000 } as const;
      const plan = planRender(input({ assets: [music] }), withClip, { ...files, sources: new Map([...files.sources, ['music', '/w/music.m4a']]) });
      expect(plan.inputs[1]).to.deep.equal(['-ss', '1', '-t', '1.3', '-i', '/w/music.m4a']);
      const chains = chainsOf(plan.filterGraph);
      expect(chains).to.include(`[1:a:0]atrim=end=1.3,asetpts=PTS-STARTPTS,${AUDIO_FORMAT},volume=0.8,adelay=delays=200:all=1[asset0a]`);
      expect(chains.slice(-2)).to.deep.equal([
        '[acat]anull[amain]',
        '[amain][asset0a]amix=inputs=2:duration=first:dropout_transition=0:normalize=0,atrim=end_sample=81600[aout]',
      ]);
    });

    it('audio replace silences the main audio under the asset', () => {
      const plan = planRender(input({ assets: [{ ...asset, audioMode: 'replace', duckMain: false }] }), probes, files);
      expect(chainsOf(plan.filterGraph).at(-1)).to.equal("[acat]asetnsamples=n=480:p=0,volume=0:enable='between(t,0.2,1.5)'[aout]");
    });
  });
});

describe('captions as ASS (captions-ass.ts)', () => {
  const frame = { width: 720, height: 1280, style: 'classic', fontSize: 54 } as const;

  it('times are H:MM:SS.cc', () => {
    expect(assTime(0)).to.equal('0:00:00.00');
    expect(assTime(3_723_456)).to.equal('1:02:03.46');
  });

  it('text cannot open override blocks or break the event', () => {
    expect(assText('a {\\b1} b\nc')).to.equal('a (\u29F5b1) b c');
  });

  it('font_size is pixels of a 1080-line frame: scaled to the output, in the shipped font', () => {
    const ass = captionsAss({ ...frame, height: 720, width: 1280 }, []);
    expect(ass).to.match(/^Style: Caption,DejaVu Sans,36,/m);
  });

  it('boxed draws an opaque box (border style 3); bold is bold', () => {
    expect(captionsAss({ ...frame, style: 'boxed' }, [])).to.match(/^Style: Caption,DejaVu Sans,64,&H00FFFFFF,&H00FFFFFF,&H60000000,&H80000000,0,0,0,0,100,100,0,0,3,/m);
    expect(captionsAss({ ...frame, style: 'bold' }, [])).to.match(/^Style: Caption,DejaVu Sans,64,&H00FFFFFF,&H00FFFFFF,&H00000000,&H80000000,-1,/m);
  });

  const line = {
    outStartMs: 1000,
    outEndMs: 2500,
    text: 'hello big world',
    words: [
      { outStartMs: 1000, outEndMs: 1400, text: 'hello' },
      { outStartMs: 1600, outEndMs: 1900, text: 'big' },
      { outStartMs: 1900, outEndMs: 2400, text: 'world' },
    ],
  };

  it('karaoke fills each word as it is spoken (\\kf in centiseconds, gaps as \\k)', () => {
    const ass = captionsAss({ ...frame, style: 'karaoke' }, [line]);
    expect(ass).to.include('Dialogue: 0,0:00:01.00,0:00:02.50,Caption,,0,0,0,,{\\kf40}hello {\\k20}{\\kf30}big {\\kf50}world');
  });

  it('highlight shows the line once per word, that word coloured, until the next word starts', () => {
    const events = captionsAss({ ...frame, style: 'highlight' }, [line]).split('\n').filter((row) => row.startsWith('Dialogue'));
    expect(events).to.deep.equal([
      'Dialogue: 0,0:00:01.00,0:00:01.60,Caption,,0,0,0,,{\\c&H0000D7FF&}hello{\\r} big world',
      'Dialogue: 0,0:00:01.60,0:00:01.90,Caption,,0,0,0,,hello {\\c&H0000D7FF&}big{\\r} world',
      'Dialogue: 0,0:00:01.90,0:00:02.50,Caption,,0,0,0,,hello big {\\c&H0000D7FF&}world{\\r}',
    ]);
  });

  it('a word-highlight style without word times shows the plain line', () => {
    expect(captionsAss({ ...frame, style: 'karaoke' }, [{ ...line, words: [] }])).to.include('Dialogue: 0,0:00:01.00,0:00:02.50,Caption,,0,0,0,,hello big world');
  });
});
