// A short journey of a third-party client: only the types openapi-typescript generates
// from the served document (generated/schema.ts, made by test/contract/generated-client.test.ts,
// not committed) and openapi-fetch's runtime. Type-checked on its own (tsconfig.json
// beside it), since the generated file exists only while that test runs.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './generated/schema.ts';

type ErrorBody = components['schemas']['Error'];

export interface JourneyInput {
  baseUrl: string;
  username: string;
  password: string;
  /** A small video to upload. */
  video: Uint8Array;
}

export interface JourneyOutcome {
  projectUuid: string;
  mediaItemId: string;
  mediaFileId: string;
  /** The media items the project scope lists after the upload. */
  listedItemIds: string[];
  /** The spine's media items, from its `data` envelope. */
  spineItemIds: string[];
  /** The `detail` of a refused request, read through the Error schema's type. */
  refusedDetail: string;
}

function failed(step: string, status: number, error: ErrorBody | undefined): Error {
  return new Error(`${step}: ${status} ${error?.detail ?? ''}`);
}

/** Logs in, creates a project, presigns an upload, PUTs it, confirms it, lists media and the spine, and logs out. */
export async function runJourney(input: JourneyInput): Promise<JourneyOutcome> {
  const client = createClient<paths>({ baseUrl: input.baseUrl });
  // What a browser does for the page: keep the cookies, send the csrf_token cookie back as X-CSRF-Token on mutations.
  const cookies = new Map<string, string>();
  const session: Middleware = {
    onRequest({ request }) {
      if (cookies.size) request.headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
      const csrf = cookies.get('csrf_token');
      if (csrf && !['GET', 'HEAD'].includes(request.method)) request.headers.set('X-CSRF-Token', csrf);
      return request;
    },
    onResponse({ response }) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
      }
      return response;
    },
  };
  client.use(session);

  const login = await client.POST('/api/v1/auth/login', {
    body: { username: input.username, password: input.password },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  if (!login.data) throw failed('login', login.response.status, login.error);

  const project = await client.POST('/api/v1/projects/', { body: { name: 'Generated client' } });
  if (!project.data) throw failed('create project', project.response.status, project.error);
  const projectUuid = project.data.uuid;

  const refused = await client.POST('/api/v1/projects/', { body: { name: '' } });
  if (!refused.error) throw new Error('an empty project name was accepted');

  const presign = await client.POST('/api/v1/media/presign', {
    body: { filename: 'talk.mp4', content_type: 'video/mp4', size_bytes: input.video.byteLength, scope: 'project', scope_project_id: projectUuid },
  });
  if (!presign.data) throw failed('presign', presign.response.status, presign.error);
  const { media_file_id: mediaFileId, media_item_id: mediaItemId, upload_url: uploadUrl } = presign.data;

  // The store, not the api: a plain PUT to the presigned URL.
  const put = await fetch(uploadUrl, { method: 'PUT', body: input.video, headers: { 'Content-Type': 'video/mp4' } });
  if (!put.ok) throw new Error(`PUT to the store: ${put.status}`);

  const confirm = await client.POST('/api/v1/media/{media_file_id}/confirm', { params: { path: { media_file_id: mediaFileId } } });
  if (!confirm.data) throw failed('confirm', confirm.response.status, confirm.error);

  const media = await client.GET('/api/v1/media', { params: { query: { scope: 'project', scope_project_id: projectUuid } } });
  if (!media.data) throw failed('list media', media.response.status, media.error);

  const spine = await client.GET('/api/v1/projects/{project_uuid}/spine', { params: { path: { project_uuid: projectUuid } } });
  if (!spine.data) throw failed('spine', spine.response.status, spine.error);

  const logout = await client.POST('/api/v1/auth/logout');
  if (logout.error) throw failed('logout', logout.response.status, logout.error);

  return {
    projectUuid,
    mediaItemId,
    mediaFileId,
    listedItemIds: media.data.data.map((item) => item.uuid),
    spineItemIds: spine.data.data.map((item) => item.media_item_id),
    refusedDetail: refused.error.detail,
  };
}
