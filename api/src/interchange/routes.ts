import type { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import type { AppContext } from '../http/state.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { SidecarQuery, TimelineBody, TimelineFile, TimelineQuery } from './schemas.ts';
import type { ExchangedFile, Interchange } from './service.ts';

const problems = {
  400: { description: 'The project has no media, or an inline override beyond the timeline' },
  404: { description: 'No such project of the caller, or draft_id / export_id is not of this project' },
  409: { description: 'A source is still processing (retry once media_ready arrived), the cuts leave nothing, or (captions, words, chapters) the project has no completed analysis' },
  422: { description: 'An unknown format (the message lists the formats), or another invalid parameter' },
};

/** Timelines for editors and the caption, transcript and chapter files of the edited video. Reads only. */
export function registerInterchangeRoutes(router: AppRouter, interchange: Interchange): void {
  const tags = ['interchange'];
  const send = (ctx: AppContext, format: z.infer<typeof TimelineQuery>['format'], file: ExchangedFile, download: boolean) => {
    ctx.set('Cache-Control', 'no-store');
    if (!download) {
      ctx.body = { format, filename: file.filename, media_type: file.mediaType, content: file.content, frame_rate: file.rate, duration_frames: file.durationFrames, segments: file.segments, markers: file.markers, unexpressed: file.unexpressed };
      return;
    }
    ctx.type = file.mediaType;
    ctx.attachment(file.filename);
    ctx.set('Cutroom-Unexpressed', encodeURIComponent(JSON.stringify(file.unexpressed)));
    ctx.body = file.content;
  };

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/timeline',
    summary: "The project's cut as an editor's timeline (FCPXML 1.10, xmeml v4, MLT, CMX 3600 EDL, OpenTimelineIO): the kept segments a render plays on the source's frame grid, video and audio on their own tracks, overlays above, every cut edit a marker (applied or offered). From the active edits or a draft; answers at once and writes nothing.",
    tags,
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: TimelineQuery,
    responses: { 200: { description: 'The timeline (JSON), or with download=true the file itself', schema: TimelineFile }, ...problems },
    handler: async (ctx, { params, query, caller, em }) => {
      const file = await interchange.timeline(em, caller.user.id, params.project_uuid, { draftId: query.draft_id, snapCutsToKeyframes: query.snap_cuts_to_keyframes }, query.format, { sourceRef: query.source_ref, mediaRoot: query.media_root });
      send(ctx, query.format, file, query.download);
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/timeline',
    summary: 'The timeline of an edit given inline (edit_overrides, as an export takes them) or of a draft; the same answer as the GET. Writes nothing.',
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: TimelineBody,
    responses: { 200: { description: 'The timeline', schema: TimelineFile }, ...problems },
    handler: async (ctx, { params, body, caller, em }) => {
      const file = await interchange.timeline(em, caller.user.id, params.project_uuid, { draftId: body.draft_id, editOverrides: body.edit_overrides, snapCutsToKeyframes: body.snap_cuts_to_keyframes }, body.format, { sourceRef: body.source_ref, mediaRoot: body.media_root });
      send(ctx, body.format, file, false);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/captions',
    summary: "Caption and transcript files re-timed to the edited video: srt and vtt (the run's caption lines, or lines planned from the transcript as burned-in captions are), words (the kept words in output time) and chapters (YouTube lines, first at 00:00, each at least 10 s). For the active edits, a draft or an export. Writes nothing.",
    tags,
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: SidecarQuery,
    responses: {
      200: { description: 'The file', contentType: 'text/plain' },
      ...problems,
      422: { description: 'An unknown format (the message lists the formats), max_words outside 2–20, or draft_id with export_id' },
    },
    handler: async (ctx, { params, query, caller, em }) => {
      const file = await interchange.sidecar(em, caller.user.id, params.project_uuid, { draftId: query.draft_id, exportId: query.export_id, snapCutsToKeyframes: query.snap_cuts_to_keyframes }, query.format, query.max_words);
      ctx.set('Cache-Control', 'no-store');
      ctx.type = file.mediaType;
      ctx.attachment(file.filename, { type: 'inline' });
      ctx.body = file.content;
    },
  });
}
