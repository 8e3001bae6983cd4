import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

/** What the provider says about one of its users. */
export interface ProviderAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
}

/**
 * A real OpenID Connect provider (oidc-provider) on loopback, with its development
 * login and consent pages. Start it before the app (the app needs the issuer), then
 * register the app's callback address.
 */
export class IdentityProvider {
  readonly clientId = 'cutroom-test';
  readonly clientSecret = randomBytes(16).toString('hex');
  readonly accounts = new Map<string, ProviderAccount>();
  readonly #server: Server;
  #handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  #issuer = '';

  private constructor() {
    this.#server = createServer((req, res) => {
      if (this.#handler) this.#handler(req, res);
      else res.writeHead(503).end('provider not configured yet');
    });
  }

  static async start(): Promise<IdentityProvider> {
    const idp = new IdentityProvider();
    await new Promise<void>((resolve) => idp.#server.listen(0, '127.0.0.1', resolve));
    idp.#issuer = `http://127.0.0.1:${(idp.#server.address() as AddressInfo).port}`;
    return idp;
  }

  get issuer(): string {
    return this.#issuer;
  }

  /** The environment that points the api at this provider. */
  get env(): Record<string, string> {
    return { OIDC_ISSUER: this.#issuer, OIDC_CLIENT_ID: this.clientId, OIDC_CLIENT_SECRET: this.clientSecret };
  }

  /** Registers the api as the provider's one client, redirecting to `callbackUrl`. */
  registerClient(callbackUrl: string): void {
    const provider = new Provider(this.#issuer, {
      clients: [
        {
          client_id: this.clientId,
          client_secret: this.clientSecret,
          redirect_uris: [callbackUrl],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
      findAccount: async (_ctx, sub) => {
        const account = this.accounts.get(sub);
        if (!account) return undefined;
        return { accountId: sub, claims: async () => ({ sub, ...account }) };
      },
      cookies: { keys: [randomBytes(16).toString('hex')] },
      jwks: { keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: 'test' }] },
      ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
      features: { devInteractions: { enabled: true } },
    });
    this.#handler = provider.callback();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/**
 * Plays the browser from the provider's authorization address to the api's callback:
 * follows redirects, signs in as `subject` on the login page and approves the consent
 * page. Returns the callback address the provider finally redirects to.
 */
export async function authorizeAtProvider(authorizationUrl: string, subject: string, callbackPrefix: string): Promise<string> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string> | undefined), Cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    init = {};
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url).href;
      if (next.startsWith(callbackPrefix)) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`provider answered ${response.status} at ${url}: ${html.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no interaction form at ${url}`);
    const fields: Record<string, string> = prompt === 'login' ? { prompt, login: subject, password: 'any' } : { prompt };
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    init = {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    };
  }
  throw new Error('the provider did not redirect back to the api within 20 steps');
}
