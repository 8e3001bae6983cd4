import { expect } from 'chai';
import { z } from 'zod';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import type { ApiRouter } from '../../api/src/http/router.ts';
import { negotiateLocale } from '../../api/src/i18n/index.ts';
import { catalogs } from '../../api/src/i18n/catalogs.ts';

/** Purpose-built routes that exercise the error model through the real middleware chain. */
function probeRoutes(router: ApiRouter): void {
  router.add({
    method: 'post',
    path: '/api/v1/test/echo',
    summary: 'Validates a body.',
    tags: ['test'],
    access: 'public',
    body: z.strictObject({ email: z.email(), age: z.number().int().min(0) }),
    responses: { 200: { description: 'Echo' } },
    handler: (ctx, { body }) => {
      ctx.body = body;
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/test/explode',
    summary: 'Fails unexpectedly.',
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'Never' } },
    handler: () => {
      throw new Error('kaboom: database fell over');
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/test/private',
    summary: 'Needs a session.',
    tags: ['test'],
    access: 'session',
    scope: 'read',
    responses: { 200: { description: 'Never without a session' } },
    handler: () => {},
  });
}

describe('HTTP error model', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ MAX_JSON_BODY_BYTES: '2048' }, {}, { extend: probeRoutes });
  });
  after(() => app.close());

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    app.fetch(path, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });

  describe('unknown route → 404 with a localized { detail }', () => {
    const cases = [
      ['en', 'No route matches GET /api/v1/nowhere.'],
      ['pt', 'Nenhuma rota corresponde a GET /api/v1/nowhere.'],
      ['es', 'Ninguna ruta coincide con GET /api/v1/nowhere.'],
    ] as const;
    for (const [language, detail] of cases) {
      it(`in ${language}`, async () => {
        const response = await app.fetch('/api/v1/nowhere', { headers: { 'Accept-Language': language } });
        expect(response.status).to.equal(404);
        expect(await json(response)).to.deep.equal({ detail });
      });
    }
  });

  it('Accept-Language q-values are honoured and unknown languages fall back to en', async () => {
    const pt = await app.fetch('/api/v1/nowhere', { headers: { 'Accept-Language': 'de;q=1, es;q=0.4, pt-BR;q=0.8' } });
    expect((await json(pt)).detail).to.match(/^Nenhuma rota/);
    const fallback = await app.fetch('/api/v1/nowhere', { headers: { 'Accept-Language': 'fr-FR, de;q=0.9' } });
    expect((await json(fallback)).detail).to.match(/^No route/);
    expect(negotiateLocale('es;q=0, pt;q=0.1')).to.equal('pt');
    expect(negotiateLocale('*')).to.equal('en');
    expect(negotiateLocale(undefined)).to.equal('en');
  });

  describe('validation failure → 422 naming the field, localized', () => {
    const cases = [
      ['en', /^Validation error: body\.email: /],
      ['pt', /^Erro de validação: body\.email: /],
      ['es', /^Error de validación: body\.email: /],
    ] as const;
    for (const [language, pattern] of cases) {
      it(`in ${language}`, async () => {
        const response = await post('/api/v1/test/echo', JSON.stringify({ email: 'not-an-email', age: 3 }), {
          'Accept-Language': language,
        });
        expect(response.status).to.equal(422);
        const body = await json(response);
        expect(body.detail).to.match(pattern);
        expect(body.code).to.equal('ValidationError');
        expect(body.errors).to.be.an('array').with.lengthOf(1);
        expect(body.errors[0].field).to.equal('body.email');
      });
    }
  });

  it('an unknown key in a strict body → 422 naming the key', async () => {
    const response = await post('/api/v1/test/echo', JSON.stringify({ email: 'a@b.co', age: 1, admin: true }));
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.contain('admin');
  });

  it('a valid body passes validation', async () => {
    const response = await post('/api/v1/test/echo', JSON.stringify({ email: 'a@b.co', age: 1 }));
    expect(response.status).to.equal(200);
    expect(await json(response)).to.deep.equal({ email: 'a@b.co', age: 1 });
  });

  it('malformed JSON → 400, never 500', async () => {
    const response = await post('/api/v1/test/echo', '{"email": ', { 'Accept-Language': 'es' });
    expect(response.status).to.equal(400);
    expect(await json(response)).to.deep.equal({ detail: 'El cuerpo de la solicitud no es JSON válido.' });
  });

  it('a NUL character in any string → 422 naming the field, never a database 500', async () => {
    const response = await post('/api/v1/test/echo', JSON.stringify({ email: 'a\u0000@b.co', age: 1 }), { 'Accept-Language': 'pt' });
    expect(response.status).to.equal(422);
    const body = await json(response);
    expect(body.detail).to.equal('Erro de validação: body.email: o texto não pode conter o caractere NUL.');
    const inQuery = await app.fetch('/api/v1/nowhere?x=%00');
    expect(inQuery.status).to.equal(404);
  });

  it('a body whose Content-Encoding does not match its bytes → 400, never 500', async () => {
    const response = await post('/api/v1/test/echo', '{"email":"a@b.co","age":1}', { 'Content-Encoding': 'gzip' });
    expect(response.status).to.equal(400);
    expect(await json(response)).to.deep.equal({ detail: 'The request body could not be read.' });
  });

  it('oversized body → 413', async () => {
    const response = await post('/api/v1/test/echo', JSON.stringify({ email: 'a@b.co', age: 1, pad: 'x'.repeat(5000) }));
    expect(response.status).to.equal(413);
    expect((await json(response)).detail).to.equal('Request body too large.');
  });

  it('a guarded route without a session → 401', async () => {
    const response = await app.fetch('/api/v1/test/private', { headers: { 'Accept-Language': 'pt' } });
    expect(response.status).to.equal(401);
    expect(await json(response)).to.deep.equal({ detail: 'Não autenticado.' });
  });

  it('wrong method on a known route → 405', async () => {
    const response = await app.fetch('/healthz', { method: 'DELETE' });
    expect(response.status).to.equal(405);
    expect((await json(response)).detail).to.equal('Method not allowed.');
  });

  it('every 5xx carries an 8-character support_id that is also in the request log line', async () => {
    const response = await app.fetch('/api/v1/test/explode', { headers: { 'Accept-Language': 'pt' } });
    expect(response.status).to.equal(500);
    const body = await json(response);
    expect(body.support_id).to.match(/^[A-Za-z0-9_-]{8}$/);
    expect(body.detail).to.equal(`Erro interno do servidor. Cite o código de suporte ${body.support_id} se nos contactar.`);
    expect(JSON.stringify(body)).not.to.contain('kaboom');
    const requestId = response.headers.get('X-Request-Id');
    const line = app.logs.find((entry) => entry.request_id === requestId);
    expect(line, 'log line of the failed request').to.exist;
    expect(line!.support_id).to.equal(body.support_id);
    expect(line!.level).to.equal(50);
    expect(JSON.stringify(line!.err)).to.contain('kaboom');
  });

  it('every response carries a request id, and a sane caller id is kept', async () => {
    const fresh = await app.fetch('/api/v1/nowhere');
    expect(fresh.headers.get('X-Request-Id')).to.match(/^[0-9a-f-]{36}$/);
    const given = await app.fetch('/healthz', { headers: { 'X-Request-Id': 'trace-123' } });
    expect(given.headers.get('X-Request-Id')).to.equal('trace-123');
    const hostile = await app.fetch('/healthz', { headers: { 'X-Request-Id': 'a b<script>' } });
    expect(hostile.headers.get('X-Request-Id')).to.not.equal('a b<script>');
  });

  it('the catalogs agree: same placeholders in en, pt and es for every key', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(catalogs.en) as (keyof typeof catalogs.en)[]) {
      for (const locale of ['pt', 'es'] as const) {
        expect(catalogs[locale][key], `${locale} ${key}`).to.be.a('string').and.not.empty;
        expect(placeholders(catalogs[locale][key]), `${locale} ${key}`).to.deep.equal(placeholders(catalogs.en[key]));
      }
    }
  });
});
