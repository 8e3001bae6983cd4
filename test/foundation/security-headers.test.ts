import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import type { ApiRouter } from '../../api/src/http/router.ts';
import { helmetChanges } from '../../api/src/http/security-headers.ts';

function explodingRoute(router: ApiRouter): void {
  router.add({
    method: 'get',
    path: '/api/v1/test/explode-headers',
    summary: 'Fails unexpectedly.',
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'Never' } },
    handler: () => {
      throw new Error('kaboom');
    },
  });
  router.add({
    method: 'post',
    path: '/api/v1/test/json-headers',
    summary: 'Validates a body.',
    tags: ['test'],
    access: 'public',
    body: z.object({ n: z.number() }),
    responses: { 200: { description: 'Echo' } },
    handler: (ctx, { body }) => {
      ctx.body = body;
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/test/loose-then-fail',
    summary: 'Chooses a loose CSP and a day of caching for its answer, then fails.',
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'Never' } },
    handler: (ctx) => {
      ctx.set('Content-Security-Policy', "default-src 'self' 'unsafe-inline'");
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.set('X-Request-Id', 'chosen-by-the-handler');
      throw new Error('kaboom after choosing headers');
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/test/head-then-fail',
    summary: 'Sends its head, then fails.',
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'A head, then nothing' } },
    handler: (ctx) => {
      ctx.res.flushHeaders();
      throw new Error('kaboom after the head went out');
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/test/em-after-release',
    summary: 'Lets its EntityManager go, then reads it again.',
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'Never' } },
    handler: (ctx) => {
      ctx.state.releaseEntityManager();
      ctx.body = { forked: Boolean(ctx.state.em) };
    },
  });
}

/** A CSP header as directive → sources. */
function directives(header: string | null): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) map.set(name, sources);
  }
  return map;
}

describe('security headers', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({}, {}, { extend: explodingRoute });
  });
  after(() => app.close());

  it("an error answer carries none of the handler's own CSP, cache lifetime or request id: the security headers as they were, Cache-Control no-store", async () => {
    const response = await app.fetch('/api/v1/test/loose-then-fail', { headers: { 'X-Request-Id': 'req-0123456789' } });
    expect(response.status).to.equal(500);
    expect(directives(response.headers.get('content-security-policy')).get('default-src')).to.deep.equal(["'none'"]);
    expect(response.headers.get('cache-control')).to.equal('no-store');
    expect(response.headers.get('x-request-id')).to.equal('req-0123456789');
  });

  it('a handler that fails after its head went out: the response still ends (nothing hangs) and the failure is logged', async () => {
    const response = await app.fetch('/api/v1/test/head-then-fail', { signal: AbortSignal.timeout(5000) });
    // The status is whatever the head carried (Koa's default, 404): an error cannot change it any more.
    expect(response.status).to.equal(404);
    await response.text();
    expect(app.logs.some((line) => line.path === '/api/v1/test/head-then-fail' && line.msg === 'request failed')).to.equal(true);
  });

  it('a request that released its EntityManager cannot fork another: reading it again fails loudly (500), never holds a new one', async () => {
    const response = await app.fetch('/api/v1/test/em-after-release');
    expect(response.status).to.equal(500);
    const logged = app.logs.find((line) => line.path === '/api/v1/test/em-after-release');
    expect(String((logged?.err as { message?: unknown } | undefined)?.message)).to.equal('this request released its EntityManager');
  });

  it('a CSP directive computed per response (a nonce) is refused at start-up: one value replayed to every response would defeat it', () => {
    expect(() => helmetChanges({ contentSecurityPolicy: { useDefaults: false, directives: { scriptSrc: [() => "'nonce-abc'"] } } })).to.throw(/computed per response/);
    expect(() => helmetChanges({ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"] } } })).not.to.throw();
  });

  it('every response (200, 400, 404, 500) carries nosniff, X-Frame-Options DENY, no referrer and a CSP that lets nothing load', async () => {
    const responses = [
      await app.fetch('/healthz'),
      await app.fetch('/api/v1/test/json-headers', { method: 'POST', body: '{"n": ', headers: { 'Content-Type': 'application/json' } }),
      await app.fetch('/api/v1/nowhere'),
      await app.fetch('/api/v1/test/explode-headers'),
    ];
    expect(responses.map((response) => response.status)).to.deep.equal([200, 400, 404, 500]);
    for (const response of responses) {
      const where = `${response.status} ${response.url}`;
      expect(response.headers.get('x-content-type-options'), where).to.equal('nosniff');
      expect(response.headers.get('x-frame-options'), where).to.equal('DENY');
      expect(response.headers.get('referrer-policy'), where).to.equal('no-referrer');
      expect(response.headers.get('strict-transport-security'), where).to.match(/^max-age=\d+/);
      const csp = directives(response.headers.get('content-security-policy'));
      expect(csp.get('default-src'), where).to.deep.equal(["'none'"]);
      expect(csp.get('frame-ancestors'), where).to.deep.equal(["'none'"]);
      expect([...csp.keys()].filter((name) => name.endsWith('-src') && name !== 'default-src'), where).to.deep.equal([]);
    }
  });

  it('the reference page at /api/v1/docs gets a CSP that admits exactly what it loads: its own assets and its one inline script', async () => {
    const page = await app.fetch('/api/v1/docs');
    expect(page.status).to.equal(200);
    const html = await page.text();
    const csp = directives(page.headers.get('content-security-policy'));
    expect(csp.get('default-src')).to.deep.equal(["'none'"]);
    expect(csp.get('frame-ancestors')).to.deep.equal(["'none'"]);
    expect(page.headers.get('x-frame-options')).to.equal('DENY');

    const scriptSources = csp.get('script-src') ?? [];
    const external = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((match) => match[1]!);
    const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]!);
    expect(external.length).to.equal(2);
    expect(inline.length).to.equal(1);
    for (const src of external) {
      expect(src, 'scripts come from this origin').to.match(/^\/api\/v1\/docs\/assets\//);
      expect((await app.fetch(src)).status, src).to.equal(200);
    }
    expect(scriptSources).to.include("'self'");
    for (const script of inline) expect(scriptSources).to.include(`'sha256-${createHash('sha256').update(script).digest('base64')}'`);
    expect(scriptSources).not.to.include("'unsafe-inline'");
    expect(scriptSources).not.to.include("'unsafe-eval'");

    // Styles and images: the local stylesheet, Swagger UI's inline styles, and the data: images its CSS uses.
    const stylesheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((match) => match[1]!);
    expect(stylesheets).to.deep.equal(['/api/v1/docs/assets/swagger-ui.css']);
    expect(csp.get('style-src')).to.include.members(["'self'", "'unsafe-inline'"]);
    const css = await (await app.fetch(stylesheets[0]!)).text();
    const cssUrls = [...css.matchAll(/url\(\s*["']?([^"')]+)/g)].map((match) => match[1]!);
    expect(cssUrls.every((url) => url.startsWith('data:')), 'the stylesheet loads only data: URLs').to.equal(true);
    expect(csp.get('img-src')).to.include.members(["'self'", 'data:']);
    // Swagger UI fetches the document from this origin.
    expect(html).to.contain("url: '/api/v1/openapi.json'");
    expect(csp.get('connect-src')).to.deep.equal(["'self'"]);
  });

  describe('/metrics with METRICS_TOKEN set', () => {
    const token = 'scrape-token-0123456789abcdef';
    let guarded: TestApp;
    before(async () => {
      guarded = await startTestApp({ METRICS_TOKEN: token });
    });
    after(() => guarded.close());

    it('without the bearer token, or with a wrong one → 401 with WWW-Authenticate: Bearer (en, pt, es)', async () => {
      const cases = [
        ['en', undefined, 'Metrics require the bearer token: Authorization: Bearer <token>.'],
        ['pt', `Bearer ${token}x`, 'As métricas exigem o token: Authorization: Bearer <token>.'],
        ['es', `Basic ${Buffer.from(`metrics:${token}`).toString('base64')}`, 'Las métricas requieren el token: Authorization: Bearer <token>.'],
      ] as const;
      for (const [language, authorization, detail] of cases) {
        const response = await guarded.fetch('/metrics', {
          headers: { 'Accept-Language': language, ...(authorization ? { Authorization: authorization } : {}) },
        });
        expect(response.status, language).to.equal(401);
        expect(response.headers.get('www-authenticate')).to.equal('Bearer realm="metrics"');
        expect(await json(response)).to.deep.equal({ detail });
      }
    });

    it('with `Authorization: Bearer <METRICS_TOKEN>` → 200 and the exposition', async () => {
      const response = await guarded.fetch('/metrics', { headers: { Authorization: `Bearer ${token}` } });
      expect(response.status).to.equal(200);
      expect(await response.text()).to.contain('# TYPE http_request_duration_seconds histogram');
    });
  });
});
