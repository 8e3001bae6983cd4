/**
 * The timeline formats editors import, each written from one InterchangeDocument: FCPXML
 * 1.10, FCP 7 XML (xmeml v4), MLT XML, CMX 3600 EDL and OpenTimelineIO JSON. Each writer
 * returns the file and what of the document the format cannot hold. Pure.
 */
import { oneLine } from './line-text.ts';
import { markerLabel, markerNote, msOf, type DocClip, type InterchangeDocument, type Rational } from './document.ts';

export const timelineFormats = ['fcpxml', 'xmeml', 'mlt', 'edl', 'otio'] as const;
export type TimelineFormat = (typeof timelineFormats)[number];

export interface WrittenFile {
  content: string;
  mediaType: string;
  extension: string;
  /** What the format cannot carry, in words a user reads. */
  unexpressed: string[];
}

export function writeTimeline(format: TimelineFormat, doc: InterchangeDocument): WrittenFile {
  switch (format) {
    case 'fcpxml':
      return fcpxml(doc);
    case 'xmeml':
      return xmeml(doc);
    case 'mlt':
      return mlt(doc);
    case 'edl':
      return edl(doc);
    case 'otio':
      return otio(doc);
  }
}

const xml = (text: string) => oneLine(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const mainClips = (doc: InterchangeDocument) => doc.clips.filter((clip) => clip.track === 'main');
const overlayClips = (doc: InterchangeDocument) => doc.clips.filter((clip) => clip.track === 'overlay');
/** The clips of each upper track, bottom up: the inserted assets', then the overlays' (a track only where it has clips). */
const upperTracks = (doc: InterchangeDocument): DocClip[][] => [doc.clips.filter((clip) => clip.track === 'insert'), ...overlayTracks(doc)].filter((clips) => clips.length > 0);

/**
 * Overlays on as many tracks as they need: a track holds clips one after another, so one
 * that overlaps an earlier one goes on the track above it, and the render's order (a later
 * asset drawn over an earlier one) is the tracks' order.
 */
function overlayTracks(doc: InterchangeDocument): DocClip[][] {
  const tracks: DocClip[][] = [];
  const placed: { clip: DocClip; track: number }[] = [];
  for (const clip of overlayClips(doc)) {
    const below = placed.filter((other) => other.clip.recordIn < clip.recordIn + clip.duration && clip.recordIn < other.clip.recordIn + other.clip.duration);
    const track = below.length === 0 ? 0 : Math.max(...below.map((other) => other.track)) + 1;
    (tracks[track] ??= []).push(clip);
    placed.push({ clip, track });
  }
  return tracks;
}
/** Every track, bottom up: the main one (always), then the upper ones. */
const allTracks = (doc: InterchangeDocument): DocClip[][] => [mainClips(doc), ...upperTracks(doc)];
const sourceOf = (doc: InterchangeDocument, clip: DocClip) => doc.sources.find((source) => source.id === clip.sourceId)!;

/** File references: a URL stays one; a path or bare name becomes a file: URL where the format wants a URL. */
function fileUrl(reference: string): string {
  if (/^https?:\/\//.test(reference)) return reference;
  if (reference.startsWith('/')) return `file://${reference.split('/').map(encodeURIComponent).join('/')}`;
  return `file://./${encodeURIComponent(reference)}`;
}

// ---------------------------------------------------------------- FCPXML 1.10

/** Frames as an FCPXML rational time: 1001 frames at 24000/1001 is "1001001/24000s". */
function fcpTime(frames: number, rate: Rational): string {
  if (frames === 0) return '0s';
  const value = frames * rate.den;
  const gcd = greatestDivisor(value, rate.num);
  return rate.num / gcd === 1 ? `${value / gcd}s` : `${value / gcd}/${rate.num / gcd}s`;
}

function greatestDivisor(a: number, b: number): number {
  return b === 0 ? Math.abs(a) : greatestDivisor(b, a % b);
}

function fcpxml(doc: InterchangeDocument): WrittenFile {
  const frameDuration = fcpTime(1, doc.rate);
  const assets = doc.sources.map((source, index) => {
    const duration = source.kind === 'image' ? '0s' : fcpTime(source.durationFrames, doc.rate);
    return `    <asset id="a${index + 1}" name="${xml(source.name)}" start="0s" duration="${duration}" hasVideo="${source.kind === 'audio' ? 0 : 1}" hasAudio="${source.hasAudio ? 1 : 0}"${source.kind === 'audio' ? '' : ' format="r1"'}${source.hasAudio ? ' audioSources="1" audioChannels="2" audioRate="48000"' : ''}>
      <media-rep kind="original-media" src="${xml(fileUrl(source.reference))}"/>
    </asset>`;
  });
  const assetId = (clip: DocClip) => `a${doc.sources.findIndex((source) => source.id === clip.sourceId) + 1}`;
  // The spine: the main clips, with a gap wherever an inserted asset plays (the insert is connected to that gap).
  type SpineItem = { recordIn: number; duration: number; sourceIn: number; clip: DocClip | null };
  const spineItems: SpineItem[] = [];
  for (const clip of [...mainClips(doc)].sort((a, b) => a.recordIn - b.recordIn)) {
    const end = spineItems.reduce((at, item) => Math.max(at, item.recordIn + item.duration), 0);
    if (clip.recordIn > end) spineItems.push({ recordIn: end, duration: clip.recordIn - end, sourceIn: 0, clip: null });
    spineItems.push({ recordIn: clip.recordIn, duration: clip.duration, sourceIn: clip.sourceIn, clip });
  }
  const spineEnd = spineItems.reduce((at, item) => Math.max(at, item.recordIn + item.duration), 0);
  if (doc.duration > spineEnd) spineItems.push({ recordIn: spineEnd, duration: doc.duration - spineEnd, sourceIn: 0, clip: null });
  // Lanes: the inserts' track is lane 1, the overlays' the lane above; a clip without picture goes below the spine.
  const laneOf = (clip: DocClip) => (upperTracks(doc).findIndex((clips) => clips.includes(clip)) + 1) * (clip.hasVideo ? 1 : -1);
  const lastItem = spineItems.at(-1);
  // Markers, chapters and connected clips live inside the spine item they fall in, at that item's own time.
  const inner = (item: SpineItem) => {
    const local = (at: number) => item.sourceIn + at - item.recordIn;
    const inside = (at: number) => at >= item.recordIn && (at < item.recordIn + item.duration || (item === lastItem && at === item.recordIn + item.duration));
    const markers = doc.markers
      .filter((marker) => inside(marker.at))
      .map((marker) => `          <marker start="${fcpTime(local(marker.at), doc.rate)}" duration="${fcpTime(Math.min(marker.duration, item.recordIn + item.duration - marker.at) || 1, doc.rate)}" value="${xml(markerLabel(marker))}" note="${xml(markerNote(marker))}"/>`);
    const chapters = doc.chapters.filter((chapter) => inside(chapter.at)).map((chapter) => `          <chapter-marker start="${fcpTime(local(chapter.at), doc.rate)}" duration="${frameDuration}" value="${xml(chapter.title)}" posterOffset="0s"/>`);
    const connected = upperTracks(doc)
      .flat()
      .filter((upper) => upper.recordIn >= item.recordIn && upper.recordIn < item.recordIn + item.duration)
      .map((upper) => `          <asset-clip ref="${assetId(upper)}" lane="${laneOf(upper)}" offset="${fcpTime(local(upper.recordIn), doc.rate)}" start="${fcpTime(upper.sourceIn, doc.rate)}" duration="${fcpTime(upper.duration, doc.rate)}" name="${xml(sourceOf(doc, upper).name)}"/>`);
    return [...markers, ...chapters, ...connected];
  };
  const spine = spineItems.map((item) => {
    const children = inner(item);
    const element = item.clip ? 'asset-clip' : 'gap';
    const open = item.clip
      ? `        <asset-clip ref="${assetId(item.clip)}" offset="${fcpTime(item.recordIn, doc.rate)}" start="${fcpTime(item.sourceIn, doc.rate)}" duration="${fcpTime(item.duration, doc.rate)}" name="${xml(sourceOf(doc, item.clip).name)}" tcFormat="NDF"`
      : `        <gap name="Gap" offset="${fcpTime(item.recordIn, doc.rate)}" start="0s" duration="${fcpTime(item.duration, doc.rate)}"`;
    return children.length === 0 ? `${open}/>` : `${open}>\n${children.join('\n')}\n        </${element}>`;
  });
  const content = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE fcpxml>
<fcpxml version="1.10">
  <resources>
    <format id="r1" name="FFVideoFormatCutroom" frameDuration="${frameDuration}" width="${doc.width}" height="${doc.height}"/>
${assets.join('\n')}
  </resources>
  <library>
    <event name="Cutroom">
      <project name="${xml(doc.name)}">
        <sequence format="r1" duration="${fcpTime(doc.duration, doc.rate)}" tcStart="0s" tcFormat="NDF" audioLayout="stereo" audioRate="48k">
          <spine>
${spine.map((line) => `    ${line}`).join('\n')}
          </spine>
        </sequence>
      </project>
    </event>
  </library>
</fcpxml>
`;
  return {
    content,
    mediaType: 'application/xml',
    extension: 'fcpxml',
    unexpressed: [...doc.unexpressed, 'Video and audio of a source stay together in one asset-clip (Final Cut keeps a clip\'s sound attached; Resolve splits it on import).'],
  };
}

// ---------------------------------------------------------------- FCP 7 XML (xmeml v4)

/** xmeml's rate: an integer timebase and the NTSC flag (x/1001 rates); other fractional rates round. */
function xmemlRate(rate: Rational): { timebase: number; ntsc: boolean; exact: boolean } {
  if (rate.den === 1001) return { timebase: Math.round(rate.num / 1000), ntsc: true, exact: rate.num % 1000 === 0 };
  const timebase = Math.round(rate.num / rate.den);
  return { timebase, ntsc: false, exact: rate.num % rate.den === 0 };
}

function xmeml(doc: InterchangeDocument): WrittenFile {
  const unexpressed = [...doc.unexpressed];
  const rate = xmemlRate(doc.rate);
  if (!rate.exact) unexpressed.push(`xmeml holds integer and NTSC rates only: ${doc.rate.num}/${doc.rate.den} is written as timebase ${rate.timebase}.`);
  const rateXml = `<rate><timebase>${rate.timebase}</timebase><ntsc>${rate.ntsc ? 'TRUE' : 'FALSE'}</ntsc></rate>`;
  const written = new Set<string>();
  const fileXml = (clip: DocClip) => {
    const index = doc.sources.findIndex((candidate) => candidate.id === clip.sourceId) + 1;
    if (written.has(clip.sourceId)) return `<file id="file-${index}"/>`;
    written.add(clip.sourceId);
    const source = sourceOf(doc, clip);
    const media = [
      source.kind === 'audio' ? '' : `<video><samplecharacteristics><width>${source.width ?? doc.width}</width><height>${source.height ?? doc.height}</height></samplecharacteristics></video>`,
      source.hasAudio ? '<audio><channelcount>2</channelcount></audio>' : '',
    ].join('');
    return `<file id="file-${index}"><name>${xml(source.name)}</name><pathurl>${xml(fileUrl(source.reference))}</pathurl>${rateXml}<duration>${source.durationFrames}</duration><media>${media}</media></file>`;
  };
  let clipNumber = 0;
  const clipItem = (clip: DocClip, mediatype: 'video' | 'audio') => {
    clipNumber += 1;
    const source = sourceOf(doc, clip);
    const sourcetrack = mediatype === 'audio' ? '<sourcetrack><mediatype>audio</mediatype><trackindex>1</trackindex></sourcetrack>' : '';
    return `          <clipitem id="clipitem-${clipNumber}"><name>${xml(source.name)}</name><enabled>TRUE</enabled><duration>${source.durationFrames}</duration>${rateXml}<start>${clip.recordIn}</start><end>${clip.recordIn + clip.duration}</end><in>${clip.sourceIn}</in><out>${clip.sourceIn + clip.duration}</out>${fileXml(clip)}${sourcetrack}</clipitem>`;
  };
  const track = (clips: DocClip[], mediatype: 'video' | 'audio') => `        <track>\n${clips.map((clip) => clipItem(clip, mediatype)).join('\n')}\n        </track>`;
  const videoTracks = allTracks(doc).map((clips) => clips.filter((clip) => clip.hasVideo)).filter((clips, index) => index === 0 || clips.length > 0);
  const audioTracks = allTracks(doc).map((clips) => clips.filter((clip) => clip.hasAudio)).filter((clips, index) => index === 0 || clips.length > 0);
  const markers = [
    ...doc.markers.map((marker) => `    <marker><name>${xml(markerLabel(marker))}</name><comment>${xml(markerNote(marker))}</comment><in>${marker.at}</in><out>${marker.duration > 1 ? marker.at + marker.duration : -1}</out></marker>`),
    ...doc.chapters.map((chapter) => `    <marker><name>${xml(chapter.title)}</name><comment>chapter</comment><in>${chapter.at}</in><out>-1</out></marker>`),
  ];
  const content = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE xmeml>
<xmeml version="4">
  <sequence id="sequence-1">
    <name>${xml(doc.name)}</name>
    <duration>${doc.duration}</duration>
    ${rateXml}
    <timecode>${rateXml}<string>00:00:00:00</string><frame>0</frame><displayformat>NDF</displayformat></timecode>
    <media>
      <video>
        <format><samplecharacteristics>${rateXml}<width>${doc.width}</width><height>${doc.height}</height><pixelaspectratio>square</pixelaspectratio></samplecharacteristics></format>
${videoTracks.map((clips) => track(clips, 'video')).join('\n')}
      </video>
      <audio>
${audioTracks.map((clips) => track(clips, 'audio')).join('\n')}
      </audio>
    </media>
${markers.join('\n')}
  </sequence>
</xmeml>
`;
  return { content, mediaType: 'application/xml', extension: 'xml', unexpressed: [...unexpressed, 'Chapters are written as sequence markers with the comment "chapter" (xmeml has no chapter marker).'] };
}

// ---------------------------------------------------------------- MLT XML (Shotcut, Kdenlive)

function mltClock(frames: number, rate: Rational): string {
  const ms = Math.round(msOf(frames, rate));
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor(ms / 60_000) % 60;
  const seconds = (ms % 60_000) / 1000;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}:${seconds.toFixed(3).padStart(6, '0')}`;
}

function mlt(doc: InterchangeDocument): WrittenFile {
  let producers = 0;
  const producerXml: string[] = [];
  const entry = (clip: DocClip) => {
    const source = sourceOf(doc, clip);
    const id = `producer${producers++}`;
    const length = Math.max(source.durationFrames, clip.sourceIn + clip.duration);
    const service = source.kind === 'image' ? 'qimage' : 'avformat';
    producerXml.push(`  <producer id="${id}" in="0" out="${length - 1}">
    <property name="length">${length}</property>
    <property name="resource">${xml(source.reference)}</property>
    <property name="mlt_service">${service}</property>
    <property name="shotcut:caption">${xml(source.name)}</property>
  </producer>`);
    return `    <entry producer="${id}" in="${clip.sourceIn}" out="${clip.sourceIn + clip.duration - 1}"/>`;
  };
  const playlist = (id: string, clips: DocClip[]) => {
    const lines: string[] = [];
    let at = 0;
    for (const clip of [...clips].sort((a, b) => a.recordIn - b.recordIn)) {
      if (clip.recordIn > at) lines.push(`    <blank length="${clip.recordIn - at}"/>`);
      lines.push(entry(clip));
      at = clip.recordIn + clip.duration;
    }
    return `  <playlist id="${id}">\n${lines.join('\n')}\n  </playlist>`;
  };
  type MltTrack = { id: string; clips: DocClip[]; hide: 'audio' | 'video' };
  const tracks = allTracks(doc)
    .flatMap((clips, index): MltTrack[] => [
      { id: `V${index + 1}`, clips: clips.filter((clip) => clip.hasVideo), hide: 'audio' },
      { id: `A${index + 1}`, clips: clips.filter((clip) => clip.hasAudio), hide: 'video' },
    ])
    .filter((track) => track.clips.length > 0 || track.id === 'V1');
  const playlists = tracks.map((track) => playlist(track.id, track.clips));
  // Track 0 is a black background; each track above is composited (video) and mixed (audio) onto it, as Shotcut writes it.
  const transitions = tracks.flatMap((track, index) => [
    `    <transition id="mix${index}"><property name="a_track">0</property><property name="b_track">${index + 1}</property><property name="mlt_service">mix</property><property name="always_active">1</property><property name="sum">1</property></transition>`,
    ...(track.hide === 'audio' ? [`    <transition id="blend${index}"><property name="a_track">0</property><property name="b_track">${index + 1}</property><property name="mlt_service">qtblend</property><property name="always_active">1</property></transition>`] : []),
  ]);
  const markers = [
    ...doc.markers.map((marker, index) => ({ index, text: markerLabel(marker), start: marker.at, end: marker.at + marker.duration - 1, color: marker.state === 'applied' ? '#ff0000' : '#ffa500' })),
    ...doc.chapters.map((chapter, index) => ({ index: doc.markers.length + index, text: `chapter: ${chapter.title}`, start: chapter.at, end: chapter.at, color: '#00a0ff' })),
  ];
  const markerXml = markers.map(
    (marker) => `      <properties name="${marker.index}"><property name="text">${xml(marker.text)}</property><property name="start">${mltClock(marker.start, doc.rate)}</property><property name="end">${mltClock(marker.end, doc.rate)}</property><property name="color">${marker.color}</property></properties>`,
  );
  // Untagged video is BT.601 below 720 lines and BT.709 from there (ffmpeg's and MLT's reading): the profile matches, so no colour is converted.
  const content = `<?xml version="1.0" encoding="utf-8"?>
<mlt LC_NUMERIC="C" version="7.12.0" title="${xml(doc.name)}">
  <profile description="Cutroom" width="${doc.width}" height="${doc.height}" progressive="1" sample_aspect_num="1" sample_aspect_den="1" display_aspect_num="${doc.width}" display_aspect_den="${doc.height}" frame_rate_num="${doc.rate.num}" frame_rate_den="${doc.rate.den}" colorspace="${doc.height >= 720 ? 709 : 601}"/>
  <producer id="black" in="0" out="${Math.max(0, doc.duration - 1)}">
    <property name="length">${Math.max(1, doc.duration)}</property>
    <property name="resource">0</property>
    <property name="mlt_service">color</property>
  </producer>
  <playlist id="background">
    <entry producer="black" in="0" out="${Math.max(0, doc.duration - 1)}"/>
  </playlist>
${producerXml.join('\n')}
${playlists.join('\n')}
  <tractor id="tractor0" title="${xml(doc.name)}" in="0" out="${Math.max(0, doc.duration - 1)}">
    <properties name="shotcut:markers">
${markerXml.join('\n')}
    </properties>
    <multitrack>
      <track producer="background"/>
${tracks.map((track) => `      <track producer="${track.id}" hide="${track.hide}"/>`).join('\n')}
    </multitrack>
${transitions.join('\n')}
  </tractor>
</mlt>
`;
  return {
    content,
    mediaType: 'application/xml',
    extension: 'mlt',
    unexpressed: [...doc.unexpressed, 'Markers and chapters are Shotcut markers (shotcut:markers); Kdenlive opens the tracks and clips but not these markers.'],
  };
}

// ---------------------------------------------------------------- CMX 3600 EDL

/** HH:MM:SS:FF at the rate's whole timebase (non-drop frame). */
function timecode(frames: number, rate: Rational): string {
  const base = Math.round(rate.num / rate.den);
  const ff = frames % base;
  const totalSeconds = Math.floor(frames / base);
  const parts = [Math.floor(totalSeconds / 3600), Math.floor(totalSeconds / 60) % 60, totalSeconds % 60, ff];
  return parts.map((part) => String(part).padStart(2, '0')).join(':');
}

/** CMX 3600 reel names: up to 8 characters, letters, digits and underscore. */
function reelName(index: number): string {
  return `AX${String(index + 1).padStart(3, '0')}`;
}

function edl(doc: InterchangeDocument): WrittenFile {
  const unexpressed = [...doc.unexpressed];
  if (doc.rate.num % doc.rate.den !== 0) unexpressed.push(`CMX 3600 timecode counts whole frames per second: ${doc.rate.num}/${doc.rate.den} is counted at ${Math.round(doc.rate.num / doc.rate.den)} (non-drop frame); frame numbers are exact, wall-clock labels drift 0.1 %.`);
  if (overlayClips(doc).length > 0) unexpressed.push('CMX 3600 has one picture track: the overlay clips are left out.');
  if (doc.clips.some((clip) => clip.track === 'insert')) unexpressed.push('CMX 3600 has one picture track: the inserted assets are events on it, where they play, not on a track of their own.');
  if (doc.chapters.length > 0) unexpressed.push('Chapters are written as LOC comments.');
  const lines = [`TITLE: ${doc.name.slice(0, 70)}`, 'FCM: NON-DROP FRAME', ''];
  let event = 0;
  const events = doc.clips.filter((clip) => clip.track !== 'overlay').sort((a, b) => a.recordIn - b.recordIn);
  for (const clip of events) {
    const sourceIndex = doc.sources.findIndex((source) => source.id === clip.sourceId);
    const source = sourceOf(doc, clip);
    const tracks = [clip.hasVideo ? 'V' : null, clip.hasAudio ? 'A' : null].filter((track): track is string => track !== null);
    for (const track of tracks) {
      event += 1;
      const times = [clip.sourceIn, clip.sourceIn + clip.duration, clip.recordIn, clip.recordIn + clip.duration].map((frames) => timecode(frames, doc.rate));
      lines.push(`${String(event).padStart(3, '0')}  ${reelName(sourceIndex).padEnd(8)} ${track.padEnd(5)} C        ${times.join(' ')}`);
      lines.push(`* FROM CLIP NAME: ${source.name}`);
      if (/^(https?:\/\/|\/)/.test(source.reference)) lines.push(`* SOURCE FILE: ${source.reference}`);
      for (const marker of doc.markers.filter((candidate) => track === tracks[0] && candidate.at >= clip.recordIn && candidate.at < clip.recordIn + clip.duration)) {
        lines.push(`* LOC: ${timecode(marker.at, doc.rate)} ${marker.state === 'applied' ? 'RED   ' : 'YELLOW'} ${markerLabel(marker)} [${marker.state}]`);
      }
      for (const chapter of doc.chapters.filter((candidate) => track === tracks[0] && candidate.at >= clip.recordIn && candidate.at < clip.recordIn + clip.duration)) {
        lines.push(`* LOC: ${timecode(chapter.at, doc.rate)} BLUE   chapter: ${chapter.title}`);
      }
      lines.push('');
    }
  }
  // every line, whatever text it carries (a reason, a file name, media_root), stays one line: no text can write an event
  return { content: lines.map(oneLine).join('\r\n'), mediaType: 'text/plain', extension: 'edl', unexpressed: [...unexpressed, 'Reel names are AX001… (CMX limits reels to 8 characters); each event names its file in a FROM CLIP NAME comment.'] };
}

// ---------------------------------------------------------------- OpenTimelineIO JSON

function otio(doc: InterchangeDocument): WrittenFile {
  const rate = doc.rate.num / doc.rate.den;
  const time = (value: number) => ({ OTIO_SCHEMA: 'RationalTime.1', rate, value });
  const range = (start: number, duration: number) => ({ OTIO_SCHEMA: 'TimeRange.1', start_time: time(start), duration: time(duration) });
  const clipJson = (clip: DocClip) => {
    const source = sourceOf(doc, clip);
    return {
      OTIO_SCHEMA: 'Clip.2',
      name: source.name,
      source_range: range(clip.sourceIn, clip.duration),
      media_references: {
        DEFAULT_MEDIA: {
          OTIO_SCHEMA: 'ExternalReference.1',
          name: source.name,
          target_url: source.reference,
          available_range: source.kind === 'image' ? null : range(0, source.durationFrames),
          available_image_bounds: null,
          metadata: {},
        },
      },
      active_media_reference_key: 'DEFAULT_MEDIA',
      effects: [],
      markers: [],
      enabled: true,
      metadata: { cutroom: { source_id: source.shownId, ...(clip.note ? { note: clip.note } : {}) } },
    };
  };
  const track = (name: string, kind: 'Video' | 'Audio', clips: DocClip[]) => {
    const children: unknown[] = [];
    let at = 0;
    for (const clip of [...clips].sort((a, b) => a.recordIn - b.recordIn)) {
      if (clip.recordIn > at) children.push({ OTIO_SCHEMA: 'Gap.1', name: '', source_range: range(0, clip.recordIn - at), effects: [], markers: [], enabled: true, metadata: {} });
      children.push(clipJson(clip));
      at = clip.recordIn + clip.duration;
    }
    return { OTIO_SCHEMA: 'Track.1', name, kind, source_range: null, effects: [], markers: [], enabled: true, metadata: {}, children };
  };
  const kindTracks = (kind: 'Video' | 'Audio') =>
    allTracks(doc)
      .map((clips, index) => ({ name: `${kind[0]}${index + 1}`, clips: clips.filter((clip) => (kind === 'Video' ? clip.hasVideo : clip.hasAudio)) }))
      .filter((candidate, index) => index === 0 || candidate.clips.length > 0)
      .map((candidate) => track(candidate.name, kind, candidate.clips));
  const tracks = [...kindTracks('Video'), ...kindTracks('Audio')];
  const markers = [
    ...doc.markers.map((marker) => ({
      OTIO_SCHEMA: 'Marker.2',
      name: markerLabel(marker),
      color: marker.state === 'applied' ? 'RED' : 'YELLOW',
      comment: markerNote(marker),
      marked_range: range(marker.at, marker.duration),
      metadata: { cutroom: { type: marker.type, reason: marker.reason, state: marker.state, edit_id: marker.editId } },
    })),
    ...doc.chapters.map((chapter) => ({ OTIO_SCHEMA: 'Marker.2', name: chapter.title, color: 'BLUE', comment: 'chapter', marked_range: range(chapter.at, 0), metadata: { cutroom: { chapter: true } } })),
  ];
  const timeline = {
    OTIO_SCHEMA: 'Timeline.1',
    name: doc.name,
    global_start_time: time(0),
    metadata: { cutroom: { rate: `${doc.rate.num}/${doc.rate.den}`, width: doc.width, height: doc.height } },
    tracks: { OTIO_SCHEMA: 'Stack.1', name: 'tracks', source_range: null, effects: [], markers, enabled: true, metadata: {}, children: tracks },
  };
  const unexpressed = [...doc.unexpressed];
  if (doc.rate.num % doc.rate.den !== 0) unexpressed.push(`OpenTimelineIO stores a rate as a floating-point number: ${doc.rate.num}/${doc.rate.den} is written as ${rate}, the exact rational in metadata.cutroom.rate.`);
  return { content: `${JSON.stringify(timeline, null, 2)}\n`, mediaType: 'application/json', extension: 'otio', unexpressed };
}
