/**
 * One user's resources of every kind an operation names by id, made through the API
 * except what only a finished job makes (a completed analysis run, a processed source),
 * which is written as the job's completion would leave it; and the fixture registry:
 * path or query parameter name → that user's resource of that kind. A parameter without
 * a fixture has no id here, and the access matrix fails naming it.
 */
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';
import type { Actor } from './cases.ts';
import { operationsOf, type OpenApiDocument, type Operation } from './operations.ts';
import { Seeded } from './random.ts';
import { conformingValue } from './values.ts';

/** The kinds of resource the world makes. */
export type Kind =
  | 'project' | 'single-put file' | 'multipart file' | 'media item' | 'canvas' | 'group'
  | 'analysis preset' | 'preview preset' | 'run' | 'edit' | 'caption line' | 'draft' | 'export' | 'api key' | 'webhook' | 'webhook delivery';

/** Which kind of the owner's resources a parameter of an operation names. */
export type Fixture = (operation: Operation | undefined) => Kind;

const onMultipartRoute = (operation: Operation | undefined) => operation?.path.includes('/multipart/') ?? false;

/** Parameter name → the kind of resource it names (the registry the access matrix checks the document against). */
export const FIXTURES: Readonly<Record<string, Fixture>> = {
  project_uuid: () => 'project',
  scope_project_id: () => 'project',
  canvas_uuid: () => 'canvas',
  media_item_id: () => 'media item',
  // confirm takes a single-PUT upload; the multipart routes take a multipart one.
  media_file_id: (operation) => (onMultipartRoute(operation) ? 'multipart file' : 'single-put file'),
  group_id: () => 'group',
  preset_uuid: (operation) => (operation?.path.includes('/preview-presets') ? 'preview preset' : 'analysis preset'),
  run_uuid: () => 'run',
  analysis_run_id: () => 'run',
  edit_uuid: () => 'edit',
  caption_line_uuid: () => 'caption line',
  draft_uuid: () => 'draft',
  export_uuid: () => 'export',
  api_key_id: () => 'api key',
  // Body fields that name a resource take the owner's too.
  draft_id: () => 'draft',
  export_id: () => 'export',
  webhook_id: () => 'webhook',
  delivery_id: () => 'webhook delivery',
};

const KINDS: readonly Kind[] = ['project', 'single-put file', 'multipart file', 'media item', 'canvas', 'group', 'analysis preset', 'preview preset', 'run', 'edit', 'caption line', 'draft', 'export', 'api key', 'webhook', 'webhook delivery'];

/** The words of the run's transcript: enough for one caption line. */
const TRANSCRIPT = {
  language: 'en',
  text: 'a world made for the fuzz suite',
  words: ['a', 'world', 'made', 'for', 'the', 'fuzz', 'suite'].map((word, index) => ({ word, start_ms: index * 300, end_ms: index * 300 + 250, confidence: 0.9, source_index: 0 })),
};

export class World {
  readonly owner: Actor;
  readonly #orm: MikroORM;
  readonly #document: OpenApiDocument;
  readonly #made = new Map<string, Promise<string>>();
  readonly #ids = new Map<string, string>();

  constructor(owner: Actor, orm: MikroORM, document: OpenApiDocument) {
    this.owner = owner;
    this.#orm = orm;
    this.#document = document;
  }

  /** The id a parameter names, once `prepare` has made every kind (undefined for a name no fixture knows). */
  madeId(name: string, operation?: Operation): string | undefined {
    const fixture = FIXTURES[name];
    return fixture ? this.#ids.get(fixture(operation)) : undefined;
  }

  /** Makes every kind of resource. */
  async prepare(): Promise<void> {
    for (const kind of KINDS) await this.make(kind);
  }

  make(kind: Kind): Promise<string> {
    switch (kind) {
      case 'project': return this.project();
      case 'single-put file': return this.singlePutFile();
      case 'multipart file': return this.multipartFile();
      case 'media item': return this.mediaItem();
      case 'canvas': return this.canvas();
      case 'group': return this.group();
      case 'analysis preset': return this.analysisPreset();
      case 'preview preset': return this.previewPreset();
      case 'run': return this.run();
      case 'edit': return this.edit();
      case 'caption line': return this.captionLine();
      case 'draft': return this.draft();
      case 'export': return this.export();
      case 'api key': return this.apiKey();
      case 'webhook': return this.webhook();
      case 'webhook delivery': return this.webhookDelivery();
    }
  }

  project(): Promise<string> {
    return this.#once('project', async () => (await this.#created('POST', '/api/v1/projects/', { name: 'Fuzz world' })).uuid as string);
  }

  /** A single-PUT upload into the project, presigned only: its item and SINGLE canvas exist at once. */
  singlePutFile(): Promise<string> {
    return this.#once('single-put file', async () => {
      const presigned = await this.#created('POST', '/api/v1/media/presign', {
        filename: 'clip.mp4', content_type: 'video/mp4', size_bytes: 1000, scope: 'project', scope_project_id: await this.project(),
      });
      this.#made.set('media item', Promise.resolve(presigned.media_item_id as string));
      this.#ids.set('media item', presigned.media_item_id as string);
      return presigned.media_file_id as string;
    });
  }

  async mediaItem(): Promise<string> {
    await this.singlePutFile();
    return this.#made.get('media item')!;
  }

  multipartFile(): Promise<string> {
    return this.#once('multipart file', async () => {
      const started = await this.#created('POST', '/api/v1/media/multipart/initiate', {
        filename: 'long.mp4', content_type: 'video/mp4', size_bytes: 30 * 2 ** 20, scope: 'library',
      });
      return started.media_file_id as string;
    });
  }

  canvas(): Promise<string> {
    return this.#once('canvas', async () => {
      const project = await this.project();
      await this.mediaItem();
      const canvases = ((await this.#read(`/api/v1/projects/${project}/canvases`)) as { data: { uuid: string }[] }).data;
      if (!canvases[0]) throw new Error('the project has no canvas after its media was presigned');
      return canvases[0].uuid;
    });
  }

  group(): Promise<string> {
    return this.#once('group', async () => (await this.#created('POST', '/api/v1/media-groups', { name: 'Fuzz group' })).uuid as string);
  }

  analysisPreset(): Promise<string> {
    return this.#once('analysis preset', async () => (await this.#createdFromSchema('/api/v1/users/me/presets')).uuid as string);
  }

  previewPreset(): Promise<string> {
    return this.#once('preview preset', async () => (await this.#createdFromSchema('/api/v1/users/me/preview-presets')).uuid as string);
  }

  /**
   * A completed run with a transcript, made active, as the analysis completion leaves it:
   * the only resource written as rows, since only a finished analysis job makes one.
   */
  run(): Promise<string> {
    return this.#once('run', async () => {
      const projectId = await this.project();
      const em = this.#orm.em.fork();
      const project = await em.findOneOrFail(Project, projectId);
      const run = em.create(AnalysisRun, {
        id: randomUUID(), project, userId: this.owner.userId, status: 'completed', pacingLevel: 50, falseStartSensitivity: 50,
        analysisMode: 'ai_edit', creditsReserved: 0, transcript: TRANSCRIPT, completedAt: new Date(),
      });
      project.activeRunId = run.id;
      project.transcript = TRANSCRIPT;
      project.status = 'analyzed';
      await em.flush();
      return run.id;
    });
  }

  /** An endpoint at a public literal address (no name to resolve; WEBHOOK_ALLOW_PRIVATE_TARGETS stays unset). */
  webhook(): Promise<string> {
    return this.#once('webhook', async () => (await this.#created('POST', '/api/v1/users/me/webhooks', { url: 'https://93.184.215.14/fuzz', event_types: ['export.failed'] })).id as string);
  }

  /** A delivery of that endpoint, written as an event would record it (failed, so no worker sends it). */
  webhookDelivery(): Promise<string> {
    return this.#once('webhook delivery', async () => {
      const endpoint = await this.webhook();
      const id = randomUUID();
      await this.#orm.em.fork().execute(
        `insert into webhook_deliveries (id, endpoint_id, message_id, event_type, payload, status, created_at) values (?, ?, ?, 'export.failed', ?, 'failed', now())`,
        [id, endpoint, `msg_${id.replaceAll('-', '')}`, JSON.stringify({ type: 'export.failed', timestamp: new Date().toISOString(), data: {} })],
      );
      return id;
    });
  }

  edit(): Promise<string> {
    return this.#once('edit', async () => {
      const project = await this.project();
      await this.run();
      return (await this.#created('POST', `/api/v1/projects/${project}/edits/`, { type: 'manual', start_ms: 0, end_ms: 100, active: false, reason: 'fuzz world' })).uuid as string;
    });
  }

  captionLine(): Promise<string> {
    return this.#once('caption line', async () => {
      const project = await this.project();
      await this.run();
      await this.#send('POST', `/api/v1/projects/${project}/caption-lines/generate`, undefined, 200);
      const page = (await this.#read(`/api/v1/projects/${project}/caption-lines`)) as { data: { uuid: string }[] };
      if (!page.data[0]) throw new Error('caption generation made no line');
      return page.data[0].uuid;
    });
  }

  draft(): Promise<string> {
    return this.#once('draft', async () => {
      const project = await this.project();
      await this.run();
      return (await this.#created('POST', `/api/v1/projects/${project}/drafts/`, { name: 'Fuzz draft' })).uuid as string;
    });
  }

  /**
   * An export of a project of its own whose one source is presigned through the API and
   * then marked processed as rows (an export needs every source UPLOADED; the artifact job
   * that would do it needs real media). Its render job fails at once for want of the
   * source object, which is fine: the export exists.
   */
  export(): Promise<string> {
    return this.#once('export', async () => {
      const project = (await this.#created('POST', '/api/v1/projects/', { name: 'Fuzz export' })).uuid as string;
      const presigned = await this.#created('POST', '/api/v1/media/presign', {
        filename: 'source.mp4', content_type: 'video/mp4', size_bytes: 1000, scope: 'project', scope_project_id: project,
      });
      await this.#orm.em.fork().nativeUpdate(MediaFile, { id: presigned.media_file_id as string }, {
        status: 'UPLOADED', durationMs: 2000, hasAudio: true, width: 320, height: 240, sizeBytes: 1000, kind: 'video',
      });
      return (await this.#send('POST', `/api/v1/projects/${project}/exports/`, { name: 'Fuzz export' }, 202)).uuid as string;
    });
  }

  apiKey(): Promise<string> {
    return this.#once('api key', async () => (await this.#created('POST', '/api/v1/users/me/api-keys', { name: 'Fuzz key', scopes: ['read'] })).id as string);
  }

  #once(kind: Kind, make: () => Promise<string>): Promise<string> {
    let made = this.#made.get(kind);
    if (!made) {
      made = make().then(
        (id) => {
          this.#ids.set(kind, id);
          return id;
        },
        (error: unknown) => {
          throw new Error(`fixture ${kind}: ${error instanceof Error ? error.message : String(error)}`);
        },
      );
      this.#made.set(kind, made);
    }
    return made;
  }

  async #send(method: string, path: string, body: unknown, expected: number): Promise<Record<string, unknown>> {
    const response = await this.owner.fetch(path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${method} ${path} → ${response.status}, expected ${expected}: ${text.slice(0, 500)}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  }

  #created(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
    return this.#send(method, path, body, 201);
  }

  /** POSTs a body made from the operation's own schema (many required fields, none of them ids). */
  #createdFromSchema(path: string): Promise<Record<string, unknown>> {
    const operation = operationsOf(this.#document).find((candidate) => candidate.method === 'POST' && candidate.path === path);
    if (!operation?.body) throw new Error(`the document has no POST ${path} with a body`);
    const body = conformingValue(operation.body.schema, { document: this.#document, random: new Seeded(1), ids: () => undefined });
    return this.#created('POST', path, body);
  }

  #read(path: string): Promise<unknown> {
    return this.#send('GET', path, undefined, 200);
  }
}
