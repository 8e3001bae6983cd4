import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../api/src/config.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';

const LISTED = 'http://front.example:8080';
const OTHER_LISTED = 'https://app.example.com';
const UNLISTED = 'http://evil.example';

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers'];

function corsHeadersOf(response: Response): Record<string, string> {
  return Object.fromEntries(CORS_HEADERS.flatMap((name) => (response.headers.has(name) ? [[name, response.headers.get(name)!]] : [])));
}

function listOf(value: string | null): string[] {
  return (value ?? '').split(',').map((item) => item.trim().toLowerCase()).filter(Boolean);
}

describe('another origin (issue 24 item 5): CORS_ALLOWED_ORIGINS lets listed pages call the api with cookies or keys; others get no CORS header', function () {
  this.timeout(60_000);
  let app: TestApp;
  let key: string;

  before(async () => {
    app = await startTestApp({ CORS_ALLOWED_ORIGINS: `${LISTED}, ${OTHER_LISTED}`, RATE_LIMIT_PER_IP: '1000' });
    const user = await signUpAndLogin(app);
    const created = await user.client.post('/api/v1/users/me/api-keys', { name: 'front end', scopes: ['read', 'write'] });
    key = ((await created.json()) as { key: string }).key;
  });
  after(async () => {
    await app?.close();
  });

  const preflight = (origin: string, path = '/api/v1/projects/') =>
    app.fetch(path, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type, x-csrf-token, idempotency-key, accept-language' },
    });

  it('a preflight from a listed origin is answered: that origin, credentials, the methods and every header the api reads', async () => {
    for (const origin of [LISTED, OTHER_LISTED]) {
      const response = await preflight(origin);
      expect(response.status, origin).to.equal(204);
      expect(response.headers.get('access-control-allow-origin')).to.equal(origin);
      expect(response.headers.get('access-control-allow-credentials')).to.equal('true');
      expect(listOf(response.headers.get('access-control-allow-methods'))).to.include.members(['get', 'head', 'post', 'put', 'patch', 'delete']);
      expect(listOf(response.headers.get('access-control-allow-headers'))).to.include.members(['content-type', 'authorization', 'x-csrf-token', 'idempotency-key', 'accept-language']);
      expect(listOf(response.headers.get('vary'))).to.include('origin');
      expect(Number(response.headers.get('access-control-max-age'))).to.be.greaterThan(0);
    }
  });

  it('a preflight from an unlisted origin is refused: no CORS header at all', async () => {
    const response = await preflight(UNLISTED);
    expect(corsHeadersOf(response)).to.deep.equal({});
    expect(listOf(response.headers.get('vary'))).to.include('origin');
  });

  it('a request with a key from a listed origin carries the origin, credentials and the exposed headers (RateLimit, RateLimit-Policy, Retry-After, ETag, Location); Vary: Origin', async () => {
    const response = await app.fetch('/api/v1/projects/', { headers: { Origin: LISTED, Authorization: `Bearer ${key}` } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('access-control-allow-origin')).to.equal(LISTED);
    expect(response.headers.get('access-control-allow-credentials')).to.equal('true');
    expect(listOf(response.headers.get('access-control-expose-headers'))).to.include.members(['ratelimit', 'ratelimit-policy', 'retry-after', 'etag', 'location']);
    expect(listOf(response.headers.get('vary'))).to.include('origin');
  });

  it('an error answer keeps its CORS headers, so the page can read why (401 with a wrong key)', async () => {
    const response = await app.fetch('/api/v1/projects/', { headers: { Origin: LISTED, Authorization: 'Bearer crk_live_wrong' } });
    expect(response.status).to.equal(401);
    expect(response.headers.get('access-control-allow-origin')).to.equal(LISTED);
    expect(response.headers.get('access-control-allow-credentials')).to.equal('true');
  });

  it('an unlisted origin gets the answer without any CORS header (the browser hides it from the page); every answer varies on Origin', async () => {
    const response = await app.fetch('/api/v1/projects/', { headers: { Origin: UNLISTED, Authorization: `Bearer ${key}` } });
    expect(corsHeadersOf(response)).to.deep.equal({});
    expect(listOf(response.headers.get('vary'))).to.include('origin');
    const noOrigin = await app.fetch('/api/v1/auth/check-auth');
    expect(listOf(noOrigin.headers.get('vary'))).to.include('origin');
  });

  it('a listed origin may log in (the cross-site login guard knows it); an unlisted one still may not', async () => {
    const user = await signUpAndLogin(app);
    const login = (origin: string) =>
      app.fetch('/api/v1/auth/login', {
        method: 'POST',
        headers: { Origin: origin, 'Sec-Fetch-Site': 'cross-site', 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: user.username, password: user.password }).toString(),
      });
    expect((await login(LISTED)).status).to.equal(200);
    expect((await login(UNLISTED)).status).to.equal(403);
  });

  it('by default no origin is listed: no CORS header for anyone', async () => {
    const plain = await startTestApp();
    try {
      const response = await plain.fetch('/api/v1/projects/', { method: 'OPTIONS', headers: { Origin: LISTED, 'Access-Control-Request-Method': 'GET' } });
      expect(corsHeadersOf(response)).to.deep.equal({});
    } finally {
      await plain.close();
    }
  });

  it('CORS_ALLOWED_ORIGINS takes origins only: a path, a trailing slash or another scheme stops start-up naming the variable', () => {
    for (const bad of ['https://app.example.com/', 'https://app.example.com/app', 'ftp://files.example.com', 'app.example.com']) {
      expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: bad }), bad).to.throw(ConfigError, /CORS_ALLOWED_ORIGINS/);
    }
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: ' https://a.example , http://127.0.0.1:5173 ' }).CORS_ALLOWED_ORIGINS).to.deep.equal(['https://a.example', 'http://127.0.0.1:5173']);
    expect(loadConfig({}).CORS_ALLOWED_ORIGINS).to.deep.equal([]);
  });
});
