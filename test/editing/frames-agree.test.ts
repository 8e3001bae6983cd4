// Issue 37 item 2: over generated edits, Cutroom's render plan, the MLT as melt renders it,
// and the clips OpenTimelineIO reads back from FCP7 XML, CMX 3600 EDL and OTIO agree frame
// for frame with the editing core's output timeline. The sources are frame-tagged (every
// frame spells its index and its source), so melt's render is read frame by frame.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { frameMs, type Rational } from '../../crds/contract/editing/frame-grid.ts';
import { renderInputSchema } from '../../crds/contract/programs/render.ts';
import { outputTimeline, type InsertSpan, type OutputTimeline } from '../../api/src/editing/output-timeline.ts';
import type { PlacedAsset } from '../../api/src/editing/resolve-edit.ts';
import type { EditRow } from '../../api/src/edits/entities.ts';
import { placedOnOutput } from '../../api/src/exports/render-request.ts';
import { buildDocument, type SourceFacts } from '../../api/src/interchange/document.ts';
import { writeTimeline, type TimelineFormat } from '../../api/src/interchange/formats.ts';
import { SeededRandom } from '../../hack/fixtures/seeded-random.ts';
import { timelineOf, withOverrides, type EditOverrides, type EditSpan, type KnownTimeline, type SpinePiece } from '../../api/src/timeline/timeline.ts';
import { describeFile, type MediaProbe } from '../../job-images/ffmpeg/src/media/probe.ts';
import { mediaToolsFromEnv } from '../../job-images/ffmpeg/src/media/tools.ts';
import { planRender, type RenderPlan } from '../../job-images/ffmpeg/src/render/render-plan.ts';
import { makeTaggedStill, makeTaggedVideo, readTags, TAGGED_HEIGHT, TAGGED_WIDTH, type TaggedFrame } from './frame-tagged-media.ts';

const run = promisify(execFile);
/** How long one melt render may take before it counts as hung. */
const MELT_LIMIT_MS = 60_000;
/** How many times one MLT file is rendered before an unreadable output fails the case. */
const MELT_ATTEMPTS = 4;
const OTIO_PYTHON = join(import.meta.dirname, '../../hack/otio/.venv/bin/python');
const OTIO_READER = join(import.meta.dirname, '../../hack/otio/read_timelines.py');

const CASES = Number(process.env['FRAMES_AGREE_CASES'] ?? 200);
const RATES: Rational[] = [
  { num: 24, den: 1 },
  { num: 25, den: 1 },
  { num: 30000, den: 1001 },
  { num: 60, den: 1 },
];

/** The sources every case plays from, by media file id: two recordings, a b-roll to insert, one to overlay, a still. */
const POOL = {
  A: { number: 1, kind: 'video', seconds: 10 },
  B: { number: 2, kind: 'video', seconds: 10 },
  I: { number: 3, kind: 'video', seconds: 6 },
  O: { number: 4, kind: 'video', seconds: 6 },
  S: { number: 5, kind: 'image', seconds: 0 },
} as const;
type PoolId = keyof typeof POOL;
const numberOf = (id: string) => POOL[id as PoolId].number;

interface Overlay {
  startMs: number;
  endMs: number;
  assetOffsetMs: number;
}

interface EditCase {
  index: number;
  rate: Rational;
  timeline: KnownTimeline;
  edits: (EditSpan & { reason: string })[];
  overrides: EditOverrides;
  inserts: InsertSpan[];
  overlays: Overlay[];
  /** Cut pairs generated closer than a frame (the slivers the core must drop). */
  slivers: number;
}

function generate(index: number, random: () => number): EditCase {
  const rate = RATES[index % RATES.length]!;
  const oneFrame = frameMs(rate);
  const int = (below: number) => Math.floor(random() * below);
  const pieces: SpinePiece[] = [];
  const pieceCount = 1 + int(3);
  for (let at = 0; at < pieceCount; at++) {
    const canvasId = `c${at}`;
    const kind = random();
    if (kind < 0.15) pieces.push({ canvasId, type: 'SINGLE', mediaItemId: 'S', mediaFileId: 'S', sourceStartMs: 0, durationMs: 500 + int(2000) });
    else if (kind < 0.25) pieces.push({ canvasId, type: 'INSERT', mediaItemId: 'I', mediaFileId: 'I', sourceStartMs: 0, durationMs: 400 + int(1600) });
    else {
      const source = random() < 0.5 ? 'A' : 'B';
      const start = int(3000);
      const length = 1500 + int(9900 - start - 1500);
      if (random() < 0.3) {
        // a split canvas: two pieces on contiguous stretches of one source
        const split = 500 + int(length - 1000);
        pieces.push({ canvasId, type: 'SINGLE', mediaItemId: source, mediaFileId: source, sourceStartMs: start, durationMs: split });
        pieces.push({ canvasId: `${canvasId}b`, type: 'SINGLE', mediaItemId: source, mediaFileId: source, sourceStartMs: start + split, durationMs: length - split });
      } else pieces.push({ canvasId, type: 'SINGLE', mediaItemId: source, mediaFileId: source, sourceStartMs: start, durationMs: length });
    }
  }
  const timeline = timelineOf(pieces) as KnownTimeline;
  const total = timeline.durationMs;
  const types = ['silence', 'false_start', 'filler', 'manual'];
  const edits: EditCase['edits'] = [];
  const addCut = (startMs: number, endMs: number) => {
    const type = types[int(types.length)]!;
    edits.push({ id: `e${edits.length}`, type, startMs, endMs, active: random() < 0.85, reason: `${type} ${edits.length}` });
  };
  let slivers = 0;
  for (let cut = int(6); cut > 0; cut--) {
    const start = int(total);
    const end = start + 30 + int(1500);
    addCut(start, end);
    if (random() < 0.35) {
      // the next cut less than a frame after this one ends: a sliver between them
      const gap = 1 + int(Math.floor(oneFrame) - 1);
      addCut(end + gap, end + gap + 30 + int(800));
      slivers += 1;
    }
  }
  const overrides: Record<string, { active?: boolean; start_ms?: number; end_ms?: number }> = {};
  for (const edit of edits) {
    const choice = random();
    if (choice < 0.1) overrides[edit.id] = { active: !edit.active };
    else if (choice < 0.2) overrides[edit.id] = { start_ms: Math.max(0, edit.startMs - int(400)), end_ms: edit.endMs + int(400) };
  }
  const inserts: InsertSpan[] = [];
  for (let insert = int(3); insert > 0; insert--) {
    if (random() < 0.5) {
      const offset = int(2000);
      inserts.push({ mediaFileId: 'I', atMs: int(total), assetOffsetMs: offset, durationMs: Math.min(200 + int(2500), POOL.I.seconds * 1000 - offset) });
    } else inserts.push({ mediaFileId: 'S', atMs: int(total), assetOffsetMs: 0, durationMs: 200 + int(1500) });
  }
  const overlays: Overlay[] = [];
  for (let overlay = int(3); overlay > 0; overlay--) {
    const start = int(total);
    overlays.push({ startMs: start, endMs: start + 100 + int(3000), assetOffsetMs: int(1500) });
  }
  overlays.sort((a, b) => a.startMs - b.startMs);
  return { index, rate, timeline, edits, overrides, inserts, overlays, slivers };
}

/** One case as every reader sees it. */
interface Resolved {
  edit: EditCase;
  output: OutputTimeline;
  placed: PlacedAsset[];
  plan: RenderPlan;
  files: Record<TimelineFormat, string>;
  /** The FCPXML written without markers and chapters (the lite reader takes a marker inside a clip for a gap of its own). */
  fcpxmlWithoutMarkers: string;
  /** Where the plan's own ffmpeg run writes its MP4. */
  rendered: string;
}

/** A segment or overlay clip in the one form every reader is compared in. */
type Clip = [source: string, sourceIn: number, recordIn: number, duration: number];

const mainOf = (output: OutputTimeline): Clip[] => output.segments.filter((s) => !s.inserted).map((s) => [s.mediaFileId, s.sourceFirstFrame, s.outFirstFrame, s.frameCount]);
const insertsOf = (output: OutputTimeline): Clip[] => output.segments.filter((s) => s.inserted).map((s) => [s.mediaFileId, s.sourceFirstFrame, s.outFirstFrame, s.frameCount]);
const overlaysOf = (resolved: Resolved): Clip[] => resolved.placed.map((p) => ['O', Math.round((p.edit.assetOffsetMs! * resolved.edit.rate.num) / (1000 * resolved.edit.rate.den)), p.frames.outFirstFrame, p.frames.frameCount]);

/** The frame the render shows at each output frame: the last overlay over it, else the segment playing. */
function expectedFrames(resolved: Resolved): TaggedFrame[] {
  const { plan } = resolved;
  const frames: TaggedFrame[] = [];
  for (const segment of plan.segments) {
    const first = Math.round((segment.sourceStartSeconds * plan.frameRate.num) / plan.frameRate.den);
    for (let k = 0; k < segment.frameCount; k++) frames.push({ source: numberOf(segment.sourceId), index: segment.kind === 'image' ? 0 : first + k });
  }
  for (const window of plan.assetFrames) {
    const asset = resolved.placed[window.asset]!;
    const first = Math.round((asset.edit.assetOffsetMs! * plan.frameRate.num) / (1000 * plan.frameRate.den));
    // an overlay placed for longer than its asset has left holds the asset's last frame (the render's eof_action=repeat)
    const last = Math.round((POOL[asset.mediaFileId as PoolId].seconds * plan.frameRate.num) / plan.frameRate.den) - 1;
    for (let k = window.firstFrame; k < window.endFrame; k++) frames[k] = { source: numberOf(asset.mediaFileId), index: Math.min(last, first + k - window.firstFrame) };
  }
  return frames;
}

/** The first output frame where what was shown is not what was planned; null when none is. */
function firstDifference(planned: readonly TaggedFrame[], shown: readonly TaggedFrame[]): { frame: number; planned: string; shown: string } | null {
  const text = (frame: TaggedFrame | undefined) => (frame === undefined ? 'none' : frame === null ? 'black' : `source ${frame.source} frame ${frame.index}`);
  const differs = planned.findIndex((frame, k) => text(frame) !== text(shown[k]));
  return differs === -1 ? null : { frame: differs, planned: text(planned[differs]), shown: text(shown[differs]) };
}

interface ReadTrack {
  name: string;
  kind: string;
  clips: { name: string; url: string | null; source_in: number; record_in: number; duration: number }[];
}

/** OpenTimelineIO's reading of many files at once: one Python process, one request a line. */
async function readWithOtio(requests: { path: string; adapter: string; rate: Rational }[]): Promise<({ tracks: ReadTrack[] } | { error: string })[]> {
  const child = spawn(OTIO_PYTHON, [OTIO_READER], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  // the adapters' own chatter ("Unhandled element type …"), shown only if the reader fails
  let chatter = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (chatter += chunk));
  const done = new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`OTIO reader exited ${code}: ${chatter.slice(-2000)}`)))));
  child.stdin.end(requests.map((request) => JSON.stringify({ path: request.path, adapter: request.adapter, rate: [request.rate.num, request.rate.den] })).join('\n') + '\n');
  await done;
  return output.trim().split('\n').map((line) => JSON.parse(line) as { tracks: ReadTrack[] } | { error: string });
}

/** A clip read back, named by its source's id (the file name without its extension). */
function clipsOf(track: ReadTrack): Clip[] {
  return track.clips.map((clip) => {
    const named = (clip.url ?? clip.name).split('/').pop()!;
    return [named.replace(/\.(mkv|png)$/, ''), clip.source_in, clip.record_in, clip.duration];
  });
}

describe('editing core: the render, melt and OpenTimelineIO agree frame for frame over generated edits', function () {
  this.timeout(1_800_000);
  let dir: string;
  const pool = new Map<string, Map<PoolId, { path: string; probe: MediaProbe }>>();
  const cases: Resolved[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-frames-'));
    const tools = mediaToolsFromEnv(process.env);
    for (const rate of RATES) {
      const sources = new Map<PoolId, { path: string; probe: MediaProbe }>();
      const folder = join(dir, `pool-${rate.num}-${rate.den}`);
      await mkdir(folder);
      for (const [id, source] of Object.entries(POOL) as [PoolId, (typeof POOL)[PoolId]][]) {
        const path = join(folder, source.kind === 'image' ? `${id}.png` : `${id}.mkv`);
        if (source.kind === 'image') await makeTaggedStill(path, source.number);
        else await makeTaggedVideo(path, source.number, rate, source.seconds);
        sources.set(id, { path, probe: await describeFile(tools, path) });
      }
      pool.set(`${rate.num}/${rate.den}`, sources);
    }

    // the same edits on every run
    const seededRandom = new SeededRandom(37);
    const random = () => seededRandom.next();
    for (let index = 0; cases.length < CASES; index++) {
      const edit = generate(index, random);
      const output = outputTimeline(edit.timeline, edit.edits, { overrides: edit.overrides, inserts: edit.inserts, rate: edit.rate, stills: new Set(['S']) });
      if (output.segments.length === 0) continue;
      const sources = pool.get(`${edit.rate.num}/${edit.rate.den}`)!;
      const placed = edit.overlays.flatMap((overlay, at): PlacedAsset[] => {
        const frames = output.spanToFrames(overlay.startMs, overlay.endMs);
        const row = { id: `o${at}`, type: 'asset', visualMode: 'overlay', audioMode: 'mix', assetOffsetMs: overlay.assetOffsetMs, startMs: overlay.startMs, endMs: overlay.endMs } as unknown as EditRow;
        return frames ? [{ edit: row, mediaFileId: 'O', frames }] : [];
      });
      const used = [...new Set([...output.segments.map((segment) => segment.mediaFileId), ...placed.map((asset) => asset.mediaFileId)])] as PoolId[];
      const input = renderInputSchema.parse({
        sources: Object.fromEntries(used.map((id) => [id, { key: id, kind: POOL[id].kind, durationMs: POOL[id].seconds * 1000 || null, hasAudio: false }])),
        ...placedOnOutput(output, placed),
        settings: {
          resolution: '720p',
          aspectRatio: '16:9',
          letterboxColor: '#000000',
          flipH: false,
          flipV: false,
          crop: null,
          audio: { normalize: false, targetLufs: -14, noiseReduction: false, noiseFloorDb: -25, mainVolumePercent: 100 },
          censorship: 'none',
          captions: null,
        },
        watermark: false,
      });
      const folder = join(dir, `case-${cases.length}`);
      await mkdir(folder);
      const plan = planRender(input, new Map(used.map((id) => [id, sources.get(id)!.probe])), {
        sources: new Map(used.map((id) => [id, sources.get(id)!.path])),
        captions: join(dir, 'captions.ass'),
        fontsDir: dir,
        output: join(folder, 'render.mp4'),
        intermediateVideo: join(dir, 'picture.mp4'),
        intermediateAudio: join(dir, 'sound.wav'),
      });
      const files: SourceFacts[] = used.map((id) => ({
        id,
        shownId: id,
        filename: sources.get(id)!.path.split('/').pop()!,
        kind: POOL[id].kind,
        hasAudio: false,
        width: TAGGED_WIDTH,
        height: TAGGED_HEIGHT,
        durationMs: POOL[id].seconds * 1000,
        rate: POOL[id].kind === 'video' ? edit.rate : null,
      }));
      const doc = buildDocument({
        name: `case ${edit.index}`,
        output,
        files,
        edits: withOverrides(edit.edits, edit.overrides),
        overlays: placed.map((asset) => ({ mediaFileId: asset.mediaFileId, frames: asset.frames, assetOffsetMs: asset.edit.assetOffsetMs!, visualMode: 'overlay', audioMode: 'mix' })),
        chapters: [],
        reference: (source) => sources.get(source.id as PoolId)!.path,
      });
      const written = {} as Record<TimelineFormat, string>;
      for (const [format, extension] of [['fcpxml', 'fcpxml'], ['xmeml', 'xml'], ['mlt', 'mlt'], ['edl', 'edl'], ['otio', 'otio']] as const) {
        written[format] = join(folder, `edit.${extension}`);
        await writeFile(written[format], writeTimeline(format, doc).content);
      }
      const fcpxmlWithoutMarkers = join(folder, 'clips-only.fcpxml');
      await writeFile(fcpxmlWithoutMarkers, writeTimeline('fcpxml', { ...doc, markers: [], chapters: [] }).content);
      cases.push({ edit, output, placed, plan, files: written, fcpxmlWithoutMarkers, rendered: join(folder, 'render.mp4') });
    }
    const sizes = cases.map((resolved) => ({ segments: resolved.output.segments.length, frames: resolved.output.frameCount }));
    console.log(
      `      ${cases.length} edits: ${sizes.reduce((sum, size) => sum + size.segments, 0)} segments, ${cases.reduce((sum, resolved) => sum + resolved.placed.length, 0)} overlays, ` +
        `${cases.reduce((sum, resolved) => sum + resolved.edit.inserts.length, 0)} inserts, ${cases.reduce((sum, resolved) => sum + resolved.edit.slivers, 0)} cut pairs closer than a frame, ` +
        `${sizes.reduce((sum, size) => sum + size.frames, 0)} output frames`,
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`the render plan keeps exactly the core's frames: every segment's source frames and output place, every overlay's frames (${CASES} edits at 24, 25, 30000/1001 and 60 fps)`, () => {
    for (const { edit, output, plan, placed } of cases) {
      const label = `case ${edit.index} at ${edit.rate.num}/${edit.rate.den}`;
      expect(plan.frameRate, label).to.deep.equal(edit.rate);
      expect(plan.frameCount, label).to.equal(output.frameCount);
      const planned = plan.segments.map((s) => [s.sourceId, s.inserted, Math.round((s.sourceStartSeconds * plan.frameRate.num) / plan.frameRate.den), s.outFirstFrame, s.frameCount]);
      expect(planned, label).to.deep.equal(output.segments.map((s) => [s.mediaFileId, s.inserted, s.sourceFirstFrame, s.outFirstFrame, s.frameCount]));
      expect(plan.assetFrames.map((window) => [window.firstFrame, window.endFrame]), label).to.deep.equal(placed.map((asset) => [asset.frames.outFirstFrame, asset.frames.outFirstFrame + asset.frames.frameCount]));
    }
  });

  it('no segment is shorter than a frame of the source it plays, and no two cuts closer than a frame leave anything between them', () => {
    for (const { edit, output } of cases) {
      expect(output.segments.every((segment) => segment.frameCount >= 1), `case ${edit.index}`).to.equal(true);
      // every stretch the output keeps lasts at least a frame on the timeline
      const kept = [];
      let cursor = 0;
      for (const cut of output.cuts) {
        if (cut.startMs > cursor) kept.push(cut.startMs - cursor);
        cursor = cut.endMs;
      }
      if (edit.timeline.durationMs > cursor) kept.push(edit.timeline.durationMs - cursor);
      for (const length of kept) expect(length, `case ${edit.index}: a kept stretch`).to.be.at.least(frameMs(edit.rate) - 1e-9);
    }
  });

  it('OpenTimelineIO reads the same clips from the FCP7 XML, the CMX 3600 EDL (given its rate) and the OTIO file: the main track, and the inserts and overlays above it', async () => {
    const requests = cases.flatMap((resolved) => [
      { path: resolved.files.xmeml, adapter: 'fcp_xml', rate: resolved.edit.rate },
      { path: resolved.files.edl, adapter: 'cmx_3600', rate: resolved.edit.rate },
      { path: resolved.files.otio, adapter: 'otio_json', rate: resolved.edit.rate },
    ]);
    const started = Date.now();
    const answers = await readWithOtio(requests);
    console.log(`      OpenTimelineIO read ${answers.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    cases.forEach((resolved, at) => {
      const label = `case ${resolved.edit.index} at ${resolved.edit.rate.num}/${resolved.edit.rate.den}`;
      const byPlace = (a: Clip, b: Clip) => a[2] - b[2] || a[0].localeCompare(b[0]) || a[1] - b[1];
      const upper = [...insertsOf(resolved.output), ...overlaysOf(resolved)].sort(byPlace);
      for (const [offset, format] of [[0, 'xmeml'], [2, 'otio']] as const) {
        const answer = answers[at * 3 + offset]!;
        if ('error' in answer) throw new Error(`${label}: ${format}: ${answer.error}`);
        const [main, ...above] = answer.tracks.filter((track) => track.kind === 'Video').map(clipsOf);
        expect(main, `${label}: ${format}: V1`).to.deep.equal(mainOf(resolved.output));
        // the upper tracks hold the inserts and the overlays, each where the render shows it (which overlay covers which, melt's frames say)
        expect(above.flat().sort(byPlace), `${label}: ${format}: upper tracks`).to.deep.equal(upper);
      }
      const edl = answers[at * 3 + 1]!;
      if ('error' in edl) throw new Error(`${label}: edl: ${edl.error}`);
      const events = edl.tracks.filter((track) => track.kind === 'Video').flatMap(clipsOf);
      const inPlace = [...mainOf(resolved.output), ...insertsOf(resolved.output)].sort((a, b) => a[2] - b[2]);
      expect(events, `${label}: edl`).to.deep.equal(inPlace);
    });
  });

  it('the FCPXML 1.10 read back by the lite FCPXML adapter: the spine is the main track and lane 1 the inserts, frame for frame (whole-number rates: the reader takes 30000/1001 as a float and drifts; written without markers, which it takes for gaps)', async () => {
    const whole = cases.filter((resolved) => resolved.edit.rate.den === 1);
    const answers = await readWithOtio(whole.map((resolved) => ({ path: resolved.fcpxmlWithoutMarkers, adapter: 'otio_fcpx_xml_lite_adapter', rate: resolved.edit.rate })));
    whole.forEach((resolved, at) => {
      const label = `case ${resolved.edit.index} at ${resolved.edit.rate.num}/${resolved.edit.rate.den}: fcpxml`;
      const answer = answers[at]!;
      if ('error' in answer) throw new Error(`${label}: ${answer.error}`);
      const lane = (name: string) => answer.tracks.filter((track) => track.name === name).flatMap(clipsOf);
      expect(lane('Lane_0'), label).to.deep.equal(mainOf(resolved.output));
      expect(lane('Lane_1'), label).to.deep.equal(insertsOf(resolved.output));
    });
    console.log(`      the lite FCPXML adapter read ${whole.length} files at 24, 25 and 60 fps`);
  });

  it("the render program's own ffmpeg run of the plan shows the frames the plan says, as melt does (one edit at each rate, real renders)", async () => {
    // at each rate the edit with the most pieces, one with an insert where there is one
    const score = (resolved: Resolved) => resolved.output.segments.length + (resolved.output.segments.some((segment) => segment.inserted) ? 100 : 0);
    const chosen = RATES.map((rate) => cases.filter((resolved) => resolved.edit.rate === rate).sort((a, b) => score(b) - score(a))[0]!);
    for (const resolved of chosen) {
      const label = `case ${resolved.edit.index} at ${resolved.edit.rate.num}/${resolved.edit.rate.den}`;
      const output = resolved.rendered;
      await run('ffmpeg', resolved.plan.renderArgs, { maxBuffer: 64 * 1024 * 1024 });
      const shown = await readTags(output);
      // the render draws overlays small in a corner, away from the tags: what it shows there is the segments' frames
      const expected = expectedFrames({ ...resolved, plan: { ...resolved.plan, assetFrames: [] } });
      const differs = firstDifference(expected, shown);
      expect({ frames: shown.length, firstDifference: differs }, label).to.deep.equal({ frames: expected.length, firstDifference: null });
      const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_frames', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', output]);
      console.log(`      ${label}: the MP4 has ${stdout.trim()} frames (ffprobe -count_frames), the plan ${resolved.plan.frameCount}, each frame the planned source frame`);
      expect(Number(stdout.trim()), label).to.equal(resolved.plan.frameCount);
    }
  });

  it('melt renders each MLT file to exactly the frames the render plan shows: frame count, and each frame\'s source and index', async () => {
    const started = Date.now();
    let frames = 0;
    let reruns = 0;
    for (const resolved of cases) {
      const label = `case ${resolved.edit.index} at ${resolved.edit.rate.num}/${resolved.edit.rate.den}`;
      const melted = join(dir, `melt-${resolved.edit.index}.nut`);
      // real_time=0: every frame rendered, none dropped to keep pace (melt's default drops frames when the machine is slow)
      // A render of a few hundred 64x32 frames takes a second or two; melt has also been seen to hang (a CI run left
      // one asleep for half an hour), so a render that outlasts MELT_LIMIT_MS is killed and rendered again, as below.
      let stderr = '';
      const melt = async () => {
        try {
          ({ stderr } = await run('melt', ['-quiet', resolved.files.mlt, '-consumer', `avformat:${melted}`, 'vcodec=rawvideo', 'pix_fmt=gray', 'an=1', 'real_time=0'], { maxBuffer: 16 * 1024 * 1024, timeout: MELT_LIMIT_MS, killSignal: 'SIGKILL' }));
        } catch (error) {
          stderr = `melt failed or hung: ${String(error)}`;
        }
      };
      // on a loaded machine (load average 20) melt has ended 0 having written a file ffmpeg cannot open, twice in a row for
      // one case: it is rendered again, up to MELT_ATTEMPTS times (counted below), never passed over
      let shown: TaggedFrame[] | undefined;
      for (let attempt = 1; !shown; attempt++) {
        await melt();
        try {
          shown = await readTags(melted);
        } catch (error) {
          if (attempt === MELT_ATTEMPTS) throw new Error(`${label}: melt's output is unreadable ${MELT_ATTEMPTS} times (${String(error)}); melt said: ${stderr.slice(-2000)}`);
          reruns += 1;
        }
      }
      await rm(melted, { force: true });
      const expected = expectedFrames(resolved);
      expect({ frames: shown.length, firstDifference: firstDifference(expected, shown) }, label).to.deep.equal({ frames: expected.length, firstDifference: null });
      frames += shown.length;
    }
    console.log(`      melt rendered ${cases.length} edits, ${frames} frames, each frame as planned, in ${((Date.now() - started) / 1000).toFixed(1)} s (${reruns} renders again for an unreadable file or a hang)`);
  });
});
