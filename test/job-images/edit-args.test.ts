import { expect } from 'chai';
import {
  concatScript,
  editFilterGraph,
  keptRanges,
  reencodeArgs,
  snapToKeyframes,
  streamCopyArgs,
} from '../../job-images/ffmpeg/src/edit/edit-args.ts';
import type { EditPlan } from '../../job-images/ffmpeg/src/edit/edit-args.ts';

const r = (startMs: number, endMs: number) => ({ startMs, endMs });

describe('media edit arguments (as data)', () => {
  describe('kept ranges', () => {
    it('start_ms and end_ms default to the whole file', () => {
      expect(keptRanges({}, [], 10_000)).to.deep.equal([r(0, 10_000)]);
    });

    it('keeps [start, end) minus the cuts', () => {
      expect(keptRanges({ startMs: 1000, endMs: 9000 }, [r(2000, 3000), r(5000, 6000)], 10_000)).to.deep.equal([
        r(1000, 2000),
        r(3000, 5000),
        r(6000, 9000),
      ]);
    });

    it('the worker clamps to the real duration when the api could not check it', () => {
      expect(keptRanges({ startMs: 500, endMs: 60_000 }, [r(4000, 90_000)], 5000)).to.deep.equal([r(500, 4000)]);
    });

    it('overlapping cuts remove their union; cuts outside [start, end) remove nothing more', () => {
      expect(keptRanges({ startMs: 1000, endMs: 8000 }, [r(3000, 5000), r(4000, 6000), r(0, 1500), r(8000, 9000)], 10_000)).to.deep.equal([
        r(1500, 3000),
        r(6000, 8000),
      ]);
    });

    it('cuts covering everything leave nothing; slivers under a frame are dropped', () => {
      expect(keptRanges({}, [r(0, 10_000)], 10_000)).to.deep.equal([]);
      expect(keptRanges({}, [r(10, 5000), r(5005, 10_000)], 10_000)).to.deep.equal([]);
    });
  });

  describe('fast mode snaps cuts to keyframes', () => {
    it('each kept range starts at the last keyframe at or before its start; overlaps merge', () => {
      const keyframes = [0, 2000, 4000, 6000];
      expect(snapToKeyframes([r(1000, 2500), r(3000, 3500), r(4700, 9000)], keyframes)).to.deep.equal([r(0, 3500), r(4000, 9000)]);
      expect(snapToKeyframes([r(2000, 3000)], keyframes)).to.deep.equal([r(2000, 3000)]);
    });
  });

  describe('exact re-encode', () => {
    const plan: EditPlan = { ranges: [r(1000, 2000), r(3500, 5250)], videoStreamIndex: 0, audioStreamIndex: 1, output: 'video' };

    it('given kept ranges, the exact filter graph: trim/atrim per range, one concat', () => {
      expect(editFilterGraph(plan)).to.equal(
        '[0:0]trim=start=1:end=2,setpts=PTS-STARTPTS[v0];[0:1]atrim=start=1:end=2,asetpts=PTS-STARTPTS[a0];' +
          '[0:0]trim=start=3.5:end=5.25,setpts=PTS-STARTPTS[v1];[0:1]atrim=start=3.5:end=5.25,asetpts=PTS-STARTPTS[a1];' +
          '[v0][a0][v1][a1]concat=n=2:v=1:a=1[v][a]',
      );
    });

    it('extract_audio: audio chains only, concat without video', () => {
      expect(editFilterGraph({ ...plan, videoStreamIndex: null, output: 'audio' })).to.equal(
        '[0:1]atrim=start=1:end=2,asetpts=PTS-STARTPTS[a0];[0:1]atrim=start=3.5:end=5.25,asetpts=PTS-STARTPTS[a1];[a0][a1]concat=n=2:v=0:a=1[a]',
      );
    });

    it('outputs H.264/AAC MP4 with the index at the front', () => {
      const args = reencodeArgs(plan, { source: '/w/source', output: '/w/edited.mp4' });
      expect(args.slice(args.indexOf('-map'))).to.deep.equal([
        '-map', '[v]', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p',
        '-map', '[a]', '-c:a', 'aac', '-b:a', '192k',
        '-movflags', '+faststart', '-f', 'mp4', '/w/edited.mp4',
      ]);
    });
  });

  describe('stream copy', () => {
    it('the concat script lists the source once per kept range with in and out points', () => {
      expect(concatScript("/w/it's", [r(0, 1500), r(4000, 6000)])).to.equal(
        "ffconcat version 1.0\nfile '/w/it'\\''s'\ninpoint 0\noutpoint 1.5\nfile '/w/it'\\''s'\ninpoint 4\noutpoint 6\n",
      );
    });

    it('copies the chosen streams without decoding', () => {
      const args = streamCopyArgs({ ranges: [], videoStreamIndex: 0, audioStreamIndex: 1, output: 'video' }, { script: '/w/s', output: '/w/o.mp4' });
      expect(args.slice(args.indexOf('-f'))).to.deep.equal([
        '-f', 'concat', '-safe', '0', '-i', '/w/s', '-map', '0:0', '-map', '0:1', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', '/w/o.mp4',
      ]);
    });
  });
});
