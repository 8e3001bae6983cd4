// The studio's one door to Cutroom: the public API, same origin, the session cookie and the
// CSRF token (X-CSRF-Token) and nothing else. The browser's Accept-Language goes with every
// request, so the api's error details arrive in the user's language.

/** An answer of the api that was not a success, with its localized `detail`. */
export class ApiError extends Error {
  readonly status: number;
  /** Seconds, from Retry-After (a locked-out login, a rate limit). */
  readonly retryAfter: number | null;
  constructor(status: number, detail: string, retryAfter: number | null) {
    super(detail);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

let csrfToken: string | null = null;

/** The token login and check-auth hand out; mutations send it back. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Body = { json: unknown } | { form: Record<string, string> } | undefined;

async function send(method: string, path: string, body: Body): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let payload: string | undefined;
  if (body && 'json' in body) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    payload = new URLSearchParams(body.form).toString();
  }
  return fetch(path, { method, headers, body: payload ?? null, credentials: 'same-origin' });
}

async function errorOf(response: Response): Promise<ApiError> {
  let detail = response.statusText || `HTTP ${response.status}`;
  try {
    const parsed = (await response.json()) as { detail?: unknown };
    if (typeof parsed.detail === 'string') detail = parsed.detail;
  } catch {
    // a body that is not JSON: the status line says enough
  }
  const retry = Number(response.headers.get('Retry-After'));
  return new ApiError(response.status, detail, Number.isFinite(retry) && retry > 0 ? retry : null);
}

/**
 * One api call. A 403 for a CSRF token the store has forgotten (it lives 30 minutes) is
 * retried once after check-auth, which issues a fresh one.
 */
export async function api<T>(method: string, path: string, body?: Body): Promise<T> {
  let response = await send(method, path, body);
  if (response.status === 403 && method !== 'GET') {
    const error = await errorOf(response.clone());
    if (/csrf/i.test(error.message) && (await refreshCsrf())) response = await send(method, path, body);
    else throw error;
  }
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  const type = response.headers.get('Content-Type') ?? '';
  return (type.includes('json') ? await response.json() : await response.text()) as T;
}

async function refreshCsrf(): Promise<boolean> {
  const auth = await api<CheckAuth>('GET', '/api/v1/auth/check-auth');
  if (!auth.authenticated) return false;
  setCsrfToken(auth.csrf_token);
  return true;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, json?: unknown) => api<T>('POST', path, json === undefined ? undefined : { json });
export const patch = <T>(path: string, json: unknown) => api<T>('PATCH', path, { json });
export const del = (path: string) => api<void>('DELETE', path);

/** A query string from the defined values. */
export function query(values: Record<string, string | number | boolean | null | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined && value !== null) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Every item of a paginated list (the api serves at most 100 a page). */
export async function allPages<T>(path: string, params: Record<string, string | number | boolean | null | undefined> = {}): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await get<Page<T>>(`${path}${query({ ...params, page, items_per_page: 100 })}`);
    items.push(...answer.data);
    if (!answer.has_more || answer.data.length === 0) return items;
  }
}

// The shapes the studio reads (fields it does not use are left out).

export interface Billing {
  tier: string;
  subscription_status: string;
  trial_used: boolean;
  credits: { ai_minutes: { balance: number; reserved: number } };
  project_count: number;
  max_projects: number;
  storage_used_bytes: number;
  storage_quota_bytes: number;
}

export interface User {
  name: string;
  username: string;
  email: string;
  email_verified: boolean;
  locale: string;
}

export type CheckAuth =
  | { authenticated: true; user: User; csrf_token: string; billing: Billing; oauth_providers: string[] }
  | { authenticated: false; message: string; oauth_providers: string[] };

export interface Login {
  csrf_token: string;
  user: User;
  billing: Billing;
}

export interface Page<T> {
  data: T[];
  total_count: number;
  has_more: boolean;
  page: number;
  items_per_page: number;
}

export interface Project {
  uuid: string;
  name: string;
  status: string;
  active_run_id: string | null;
  created_at: string;
  transcript?: Transcript | null;
}

export interface TranscriptWord {
  word: string;
  start_ms: number;
  end_ms: number;
  confidence: number | null;
}

export interface Transcript {
  language: string | null;
  text: string;
  words: TranscriptWord[];
}

export type MediaStatus = 'pending' | 'processing' | 'uploaded' | 'failed';

export interface MediaItem {
  uuid: string;
  media_file_id: string;
  display_name: string | null;
  status: MediaStatus;
  error: string | null;
  kind: string | null;
  original_filename: string;
  size_bytes: number | null;
  duration_ms: number | null;
  has_audio: boolean;
  waveform_peaks: number[] | null;
  proxy_status: string;
}

export interface Edit {
  uuid: string;
  type: string;
  start_ms: number;
  end_ms: number;
  active: boolean;
  reason: string;
  confidence: number | null;
}

/** The kinds the analysis suggests; manual and asset edits are the creator's own. */
export const isSuggestion = (edit: Edit) => edit.type !== 'manual' && edit.type !== 'asset';

export interface Preset {
  uuid: string;
  name: string;
  pacing_level: number;
  false_start_sensitivity: number;
  language: string | null;
  is_default: boolean;
}

export interface CaptionLine {
  uuid: string;
  text: string;
  original_text: string;
  sequence: number;
}

export interface EditOverride {
  active?: boolean;
  start_ms?: number;
  end_ms?: number;
}

export interface Draft {
  uuid: string;
  name: string;
  edit_overrides: Record<string, EditOverride>;
  analysis_run_id: string | null;
  created_at?: string;
}

export interface Export {
  uuid: string;
  name: string;
  status: string;
  error?: string | null;
  created_at: string;
}

export interface Estimate {
  estimated_minutes: number;
  balance: number;
  sufficient: boolean;
}

export interface Playback {
  url: string;
  expires_in: number;
}
