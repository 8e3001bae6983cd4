import { randomBytes } from 'node:crypto';
import type { TestApp } from './harness.ts';
import type { UserView } from '../../api/src/accounts/accounts-service.ts';
import type { UserRow } from '../../api/src/accounts/entities.ts';
import type { TierName } from '../../api/src/billing/tiers.ts';
import type { Locale } from '../../api/src/i18n/index.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A browser-like client of a test app: keeps the cookies the api sets and, like the
 * front end, sends the csrf_token cookie back as X-CSRF-Token on mutating requests.
 */
export class Client {
  readonly app: TestApp;
  readonly cookies = new Map<string, string>();
  /** Sent as X-Forwarded-For, so per-IP limits can tell clients apart (needs TRUST_PROXY=true). */
  readonly ip: string | undefined;
  readonly #headers: Record<string, string>;

  constructor(app: TestApp, options: { ip?: string; headers?: Record<string, string> } = {}) {
    this.app = app;
    this.ip = options.ip;
    this.#headers = options.headers ?? {};
  }

  /** The CSRF token the front end would read from its cookie. */
  get csrf(): string | undefined {
    return this.cookies.get('csrf_token');
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.#headers)) if (!headers.has(name)) headers.set(name, value);
    if (this.cookies.size && !headers.has('Cookie')) headers.set('Cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const method = (init.method ?? 'GET').toUpperCase();
    if (MUTATING.has(method) && this.csrf && !headers.has('X-CSRF-Token')) headers.set('X-CSRF-Token', this.csrf);
    if (this.ip && !headers.has('X-Forwarded-For')) headers.set('X-Forwarded-For', this.ip);
    const response = await this.app.fetch(path, { redirect: 'manual', ...init, headers });
    this.keepCookies(response);
    return response;
  }

  get(path: string, init: RequestInit = {}): Promise<Response> {
    return this.fetch(path, init);
  }

  post(path: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
    return this.#send('POST', path, body, init);
  }

  patch(path: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
    return this.#send('PATCH', path, body, init);
  }

  put(path: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
    return this.#send('PUT', path, body, init);
  }

  delete(path: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
    return this.#send('DELETE', path, body, init);
  }

  /** POST an HTML form (login is form-encoded). */
  postForm(path: string, fields: Record<string, string>, init: RequestInit = {}): Promise<Response> {
    return this.fetch(path, {
      ...init,
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(init.headers as Record<string, string> | undefined) },
    });
  }

  /** Password login; the session and CSRF cookies land in this client. */
  logIn(username: string, password: string, options: { rememberMe?: boolean } = {}): Promise<Response> {
    return this.postForm('/api/v1/auth/login', { username, password, ...(options.rememberMe ? { remember_me: 'true' } : {}) });
  }

  keepCookies(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const removed = attributes.some((attribute) => /^max-age=0$/i.test(attribute));
      if (removed || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  #send(method: string, path: string, body: unknown, init: RequestInit): Promise<Response> {
    const headers = { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...(init.headers as Record<string, string> | undefined) };
    return this.fetch(path, { ...init, method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  }
}

export interface AccountOptions {
  tier?: TierName;
  superuser?: boolean;
  /** AI minutes granted on top (reference `test-grant`). */
  credits?: number;
  /** Start the 7-day trial (Creator, 30 minutes), as verify-email would. */
  trial?: boolean;
  locale?: Locale;
  name?: string;
  username?: string;
  email?: string;
  password?: string;
}

export interface TestAccount {
  user: UserRow;
  username: string;
  email: string;
  password: string;
}

/** A unique username for a test (usernames and addresses are unique per database). */
export function uniqueUsername(prefix = 'user'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/**
 * A verified account made directly through the services (no signup request, so no
 * signup rate limit and no mail), on the tier asked for.
 */
export async function createAccount(app: TestApp, options: AccountOptions = {}): Promise<TestAccount> {
  const { accounts, billing, orm } = app.services;
  const username = options.username ?? uniqueUsername();
  const email = (options.email ?? `${username}@example.test`).toLowerCase();
  const password = options.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const em = orm.em.fork();
  const user = await accounts.createVerifiedAccount(em, {
    name: options.name ?? `Test ${username}`,
    username,
    email,
    password,
    locale: options.locale ?? 'en',
    superuser: options.superuser ?? false,
  });
  if (options.trial) await billing.grantTrial(em, user);
  if (options.tier && options.tier !== 'Free') await billing.setPlan(em, user.id, { tier: options.tier, status: 'active' });
  if (options.credits) await billing.grantCredits(em, user.id, { reference: 'test-grant', minutes: options.credits });
  return { user, username, email, password };
}

export interface SignedIn extends TestAccount {
  /** The user as the login answer showed it. */
  view: UserView;
  client: Client;
  /** Shortcut for client.fetch: cookies and X-CSRF-Token included. */
  fetch: Client['fetch'];
  csrf: string;
}

/**
 * A verified user on the tier asked for, logged in over HTTP: the returned client
 * carries the session cookie and the CSRF header.
 *
 *   const { user, client } = await signUpAndLogin(app, { tier: 'Creator' });
 *   const response = await client.post('/api/v1/projects/', { name: 'Demo' });
 */
export async function signUpAndLogin(app: TestApp, options: AccountOptions = {}): Promise<SignedIn> {
  const account = await createAccount(app, options);
  const client = new Client(app);
  const response = await client.logIn(account.username, account.password);
  if (response.status !== 200) throw new Error(`login of ${account.username} failed: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { csrf_token: string; user: UserView };
  return { ...account, view: body.user, client, fetch: client.fetch.bind(client), csrf: body.csrf_token };
}
