import { z } from 'zod';

/**
 * Every event Cutroom sends on its streams, declared once: the stream it travels on (the
 * user's or a project's), its SSE name (the key, lowercase as on the wire), its data, and
 * its webhook — the dotted name, the payload and how the payload is made from the event —
 * or why it has none. The bus's types, the saved outcome events (jobs.outcome_events),
 * webhook recording (webhooks/events.ts), the webhook payload schemas (webhooks/payloads.ts)
 * and the OpenAPI document (the streams' descriptions and the `webhooks` section) are
 * derived from it: an entry that makes no webhook decision does not compile.
 */

/** Longest text an event carries to a webhook (a failure's message): payloads stay small. */
export const WEBHOOK_TEXT_MAX = 1000;

/** A text cut to what a webhook payload carries. */
export function payloadText(value: string): string {
  return value.length > WEBHOOK_TEXT_MAX ? `${value.slice(0, WEBHOOK_TEXT_MAX - 1)}…` : value;
}

export type Stream = 'user' | 'project';

/**
 * What a webhook knows besides the event: the project it concerns. For a project event the
 * stream's project; for a media event the item's project (null for an item of the library).
 */
export type WebhookContext<S extends Stream> = S extends 'project' ? { projectId: string } : { projectId: string | null };

interface WebhookDeclaration<Data, Name extends string, Payload extends z.ZodObject> {
  name: Name;
  data: Payload;
  /** The payload from the stream event's data: ids a client needs, never storage keys, texts cut to WEBHOOK_TEXT_MAX. */
  from(data: Data, context: { projectId: string | null }): z.input<Payload>;
}

/** One event of the catalog; `webhook` null says, with `noWebhook`, why receivers do not get it. */
export interface EventDeclaration<S extends Stream = Stream, D extends z.ZodObject = z.ZodObject> {
  stream: S;
  data: D;
  /** When it is sent, as the OpenAPI document says it. */
  about: string;
  webhook: WebhookDeclaration<z.infer<D>, string, z.ZodObject> | null;
  noWebhook?: string;
}

/** Starts a declaration; it is complete once `.webhook(…)` or `.noWebhook(…)` decides. */
function event<S extends Stream, D extends z.ZodObject>(stream: S, data: D, about: string) {
  return {
    webhook<N extends string, P extends z.ZodObject>(name: N, payload: P, from: (data: z.infer<D>, context: WebhookContext<S>) => z.input<P>) {
      return { stream, data, about, webhook: { name, data: payload, from: from as (data: z.infer<D>, context: { projectId: string | null }) => z.input<P> } };
    },
    noWebhook(why: string) {
      return { stream, data, about, webhook: null, noWebhook: why };
    },
  };
}

const uuid = z.uuid();
const webhookText = z.string().max(WEBHOOK_TEXT_MAX);

const mediaIds = { media_file_uuid: uuid, media_item_uuid: uuid, display_name: z.string().nullable() };
/** A media webhook's ids: the stream's and the item's project, which the user stream does not carry. */
const mediaWebhookIds = {
  media_item_uuid: uuid.describe('The media item the file belongs to.'),
  media_file_uuid: uuid.describe('The stored file the artifacts were made for.'),
  project_uuid: uuid.nullable().describe("The item's project; null for an item of the library."),
  display_name: z.string().max(255).nullable(),
};
const mediaWebhook = (data: z.infer<z.ZodObject<typeof mediaIds>>, { projectId }: { projectId: string | null }) => ({
  media_item_uuid: data.media_item_uuid,
  media_file_uuid: data.media_file_uuid,
  project_uuid: projectId,
  display_name: data.display_name,
});

const run = { project_uuid: uuid, analysis_run_id: uuid };
const runOf = (data: { project_uuid: string; analysis_run_id: string }) => ({ project_uuid: data.project_uuid, analysis_run_id: data.analysis_run_id });
const exported = { project_uuid: uuid, export_uuid: uuid };
const exportOf = (data: { export_uuid: string }, { projectId }: { projectId: string }) => ({ project_uuid: projectId, export_uuid: data.export_uuid });

const progressIsForPages = 'progress is for a page that shows it; a receiver hears the start and the end';

export const eventCatalog = {
  media_ready: event('user', z.object({ ...mediaIds, proxy_status: z.string() }), 'artifacts complete, the media file is UPLOADED').webhook(
    'media.ready',
    z.object({ ...mediaWebhookIds, proxy_status: z.string().max(50) }),
    (data, context) => ({ ...mediaWebhook(data, context), proxy_status: data.proxy_status }),
  ),
  media_failed: event('user', z.object({ ...mediaIds, error: z.string() }), 'processing failed').webhook(
    'media.failed',
    z.object({ ...mediaWebhookIds, error: webhookText }),
    (data, context) => ({ ...mediaWebhook(data, context), error: payloadText(data.error) }),
  ),
  analysis_started: event('project', z.object(run), 'the analysis is queued').webhook('analysis.started', z.object(run), runOf),
  analysis_progress: event(
    'project',
    z.object({ project_uuid: uuid, analysis_run_id: uuid.nullable(), step: z.string(), progress: z.number().min(0).max(100) }),
    'an analysis step advanced (the latest is kept an hour for a stream opened later)',
  ).noWebhook(progressIsForPages),
  analysis_complete: event('project', z.object({ ...run, edit_count: z.int().nonnegative() }), 'all edits created').webhook(
    'analysis.completed',
    z.object({ ...run, edit_count: z.int().nonnegative() }),
    (data) => ({ ...runOf(data), edit_count: data.edit_count }),
  ),
  analysis_failed: event('project', z.object({ ...run, error: z.string() }), 'the analysis failed').webhook(
    'analysis.failed',
    z.object({ ...run, error: webhookText }),
    (data) => ({ ...runOf(data), error: payloadText(data.error) }),
  ),
  export_started: event('project', z.object({ export_uuid: uuid }), 'the render begins').webhook('export.started', z.object(exported), exportOf),
  export_progress: event(
    'project',
    z.object({ export_uuid: uuid.nullable(), progress: z.int().min(0).max(100), message: z.string() }),
    'the render reached 5, 30 or 85 percent',
  ).noWebhook(progressIsForPages),
  export_complete: event('project', z.object({ export_uuid: uuid, storage_key: z.string() }), 'ready to download').webhook('export.completed', z.object(exported), exportOf),
  export_failed: event('project', z.object({ export_uuid: uuid, error: z.string() }), 'the render failed').webhook(
    'export.failed',
    z.object({ ...exported, error: webhookText }),
    (data, context) => ({ ...exportOf(data, context), error: payloadText(data.error) }),
  ),
} satisfies Record<string, EventDeclaration>;

type Catalog = typeof eventCatalog;
export type StreamEventType = keyof Catalog;
export type EventsOf<S extends Stream> = { [T in StreamEventType]: Catalog[T]['stream'] extends S ? T : never }[StreamEventType];

/** One event as it travels: its SSE name and its data. */
export type StreamEvent<T extends StreamEventType = StreamEventType> = { [K in T]: { type: K; data: z.infer<Catalog[K]['data']> } }[T];

/** Media events of one user, as the user stream sends them. */
export type UserEvent = StreamEvent<EventsOf<'user'>>;
/** Analysis and export events of a project, as its stream sends them. */
export type ProjectEvent = StreamEvent<EventsOf<'project'>>;
export type ProjectEventType = ProjectEvent['type'];

/** The events of each stream, in the catalog's order. */
export const streamEventTypes = <S extends Stream>(stream: S): EventsOf<S>[] =>
  (Object.keys(eventCatalog) as StreamEventType[]).filter((type): type is EventsOf<S> => eventCatalog[type].stream === stream);

/** The webhook each stream event makes, by its dotted name, with its payload schema. */
type StreamWebhooks = {
  [T in StreamEventType as Catalog[T]['webhook'] extends { name: infer N extends string } ? N : never]: Catalog[T]['webhook'] extends { data: infer P } ? P : never;
};

/** The webhook payload schemas of the stream events, in the catalog's order. */
export const streamWebhookData = Object.fromEntries(
  Object.values(eventCatalog as Record<StreamEventType, EventDeclaration>).flatMap(({ webhook }) => (webhook ? [[webhook.name, webhook.data]] : [])),
) as StreamWebhooks;

/** The webhook of a stream event, or null when the catalog says it has none. */
export function webhookOf(event: StreamEvent, context: { projectId: string | null }): { type: keyof StreamWebhooks; data: unknown } | null {
  const declared: EventDeclaration = eventCatalog[event.type];
  if (!declared.webhook) return null;
  return { type: declared.webhook.name as keyof StreamWebhooks, data: declared.webhook.from(event.data, context) };
}

/**
 * The project stream's late-subscriber rule (the spec's): the latest `kept` event of a
 * project is kept `seconds` for a stream that opens later, and dropped by any of `clearedBy`.
 */
export interface SnapshotRule {
  kept: ProjectEventType;
  clearedBy: readonly ProjectEventType[];
  seconds: number;
}

export const progressSnapshot: SnapshotRule = { kept: 'analysis_progress', clearedBy: ['analysis_complete', 'analysis_failed'], seconds: 3600 };
