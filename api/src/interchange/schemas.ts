import { z } from 'zod';
import { EditOverridesSchema } from '../drafts/schemas.ts';
import { SNAP_CUTS_TO_KEYFRAMES_TEXT } from '../exports/schemas.ts';
import { MAX_MAX_WORDS, MIN_MAX_WORDS } from '../captions/lines.ts';
import { timelineFormats } from './formats.ts';
import { captionFormats } from './sidecars.ts';

/** The export setting of that name, as a query parameter: absent means the default of the edit selected. */
const snapCutsQuery = z
  .enum(['true', 'false'])
  .optional()
  .transform((value) => (value === undefined ? undefined : value === 'true'));
const SNAP_AS_EXPORTED = `As the export setting of that name, so a file matches an export made from the same edit: ${SNAP_CUTS_TO_KEYFRAMES_TEXT}`;

const selection = {
  draft_id: z.uuid().optional().describe("A saved draft of the project: its edit_overrides (default: the project's active edits)."),
  snap_cuts_to_keyframes: snapCutsQuery.describe(SNAP_AS_EXPORTED),
};

const references = {
  source_ref: z.enum(['name', 'path', 'url']).default('name').describe('How sources are referenced: name (the uploaded file name, default), path (media_root/name) or url (a presigned GET, valid 3600 s).'),
  media_root: z.string().min(1).max(1000).optional().describe('The folder the editor finds the sources in, with source_ref=path.'),
  download: z.enum(['true', 'false']).default('false').transform((value) => value === 'true').describe('true: the file itself (Content-Disposition attachment); false (default): JSON with the file and what the format dropped.'),
};

export const TimelineQuery = z.object({
  format: z.enum(timelineFormats).describe('fcpxml (FCPXML 1.10: Final Cut Pro, DaVinci Resolve), xmeml (FCP 7 XML v4: Premiere Pro, Resolve), mlt (MLT XML: Shotcut, Kdenlive), edl (CMX 3600), otio (OpenTimelineIO JSON).'),
  ...selection,
  ...references,
});

export const TimelineBody = z
  .strictObject({
    format: z.enum(timelineFormats),
    draft_id: z.uuid().optional(),
    edit_overrides: EditOverridesSchema.optional().describe('Inline overrides (not with draft_id), checked like an export\'s.'),
    source_ref: z.enum(['name', 'path', 'url']).default('name'),
    media_root: z.string().min(1).max(1000).optional(),
    snap_cuts_to_keyframes: z.boolean().optional().describe(SNAP_AS_EXPORTED),
  })
  .meta({ id: 'TimelineRequest' });

export const TimelineFile = z
  .object({
    format: z.enum(timelineFormats),
    filename: z.string(),
    media_type: z.string(),
    content: z.string().describe('The file, as text.'),
    frame_rate: z.object({ num: z.int(), den: z.int() }).describe('The sequence rate, rational (24000/1001 stays so).'),
    duration_frames: z.int(),
    segments: z.array(z.object({ source: z.string(), source_in: z.int(), record_in: z.int(), duration: z.int(), track: z.enum(['main', 'insert', 'overlay']) })).describe('The clips, in frames of frame_rate. main: the recordings\' cut (V1/A1); insert: an inserted asset, on the first upper track over a gap of the main one; overlay: an asset over the main track, on the track above.'),
    markers: z.int().describe('Markers made from cut edits (applied and offered).'),
    unexpressed: z.array(z.string()).describe('What this format cannot hold of the edit: nothing is dropped silently.'),
  })
  .meta({ id: 'TimelineFile' });

export const SidecarQuery = z.object({
  format: z.enum(captionFormats).describe('srt, vtt (WebVTT), words (word-level transcript JSON) or chapters (YouTube "00:00 Title" lines); all in the edited video\'s time.'),
  ...selection,
  export_id: z.uuid().optional().describe('An export of the project: the edit it rendered (its overrides, caption line length and snap_cuts_to_keyframes).'),
  snap_cuts_to_keyframes: snapCutsQuery.describe(`${SNAP_AS_EXPORTED} With export_id, the default is what that export did.`),
  max_words: z.coerce.number().int().min(MIN_MAX_WORDS).max(MAX_MAX_WORDS).optional().describe("Words a cue holds when the run has no caption lines (default: the export's or draft's aspect ratio rule, 7; 4 for 9:16)."),
});
