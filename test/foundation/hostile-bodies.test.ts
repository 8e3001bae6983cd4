import { brotliCompressSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { createItem } from '../media/library-fixtures.ts';
import { MediaItem } from '../../api/src/media/entities.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../api/src/http/json-body.ts';
import type { ApiRouter } from '../../api/src/http/router.ts';

/** A route that takes any JSON body, so the edge's own rules are what answers. */
function anyBodyRoute(router: ApiRouter): void {
  router.add({
    method: 'post',
    path: '/api/v1/test/any-body',
    summary: 'Accepts any body.',
    tags: ['test'],
    access: 'public',
    body: z.unknown(),
    responses: { 200: { description: 'Accepted' } },
    handler: (ctx) => {
      ctx.body = { accepted: true };
    },
  });
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const TOO_DEEP = {
  en: `The request body nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels.`,
  pt: `O corpo do pedido aninha listas ou objetos em mais de ${MAX_JSON_DEPTH} níveis.`,
  es: `El cuerpo de la solicitud anida listas u objetos en más de ${MAX_JSON_DEPTH} niveles.`,
} as const;

describe('hostile request bodies', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({}, {}, { extend: anyBodyRoute });
  });
  after(() => app.close());

  const postJson = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
    app.fetch('/api/v1/test/any-body', { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });

  describe('deeply nested JSON', () => {
    it('20 KB of `[` → 400 with the catalog message (en, pt, es) on every body route, before authentication, never 500', async () => {
      const body = nested(10_000);
      const routes = app.router.stack.flatMap((layer) =>
        layer.methods
          .filter((method) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method))
          .map((method) => [method, String(layer.path).replace(/:\w+/g, randomUUID())] as const),
      );
      expect(routes.length).to.be.greaterThan(20);
      for (const [index, [method, path]] of routes.entries()) {
        const language = (['en', 'pt', 'es'] as const)[index % 3]!;
        const response = await app.fetch(path, { method, body, headers: { 'Content-Type': 'application/json', 'Accept-Language': language } });
        expect(response.status, `${method} ${path}`).to.equal(400);
        expect(await json(response), `${method} ${path}`).to.deep.equal({ detail: TOO_DEEP[language] });
      }
    });

    it('the depth is read from the text: a deep body never reaches JSON.parse', async () => {
      const parsedDeep: number[] = [];
      const parse = JSON.parse;
      JSON.parse = ((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
        if (typeof text === 'string' && text.startsWith('[[[[[[[[')) parsedDeep.push(text.length);
        return parse(text, reviver);
      }) as typeof JSON.parse;
      try {
        // Just under MAX_JSON_BODY_BYTES (1 MiB): the largest nest that is read at all.
        const response = await postJson(nested(500_000));
        expect(response.status).to.equal(400);
        expect((await json(response)).detail).to.equal(TOO_DEEP.en);
      } finally {
        JSON.parse = parse;
      }
      expect(parsedDeep).to.deep.equal([]);
    });

    it(`nesting up to ${MAX_JSON_DEPTH} levels is accepted; one more is 400; brackets inside strings do not count`, async () => {
      expect((await postJson(nested(MAX_JSON_DEPTH))).status).to.equal(200);
      expect((await postJson(nested(MAX_JSON_DEPTH + 1))).status).to.equal(400);
      const inStrings = JSON.stringify({ text: '[{'.repeat(500), quoted: '\\"[[[[' + '['.repeat(200) });
      expect((await postJson(inStrings)).status).to.equal(200);
      expect(nestsDeeperThan(inStrings, 1)).to.equal(false);
      expect(nestsDeeperThan('{"a":"\\\\"}' + nested(3), 2)).to.equal(true); // an escaped backslash ends before the quote
    });

    it('a `__proto__` key is still refused as malformed JSON (400)', async () => {
      const response = await postJson('{"a": {"__proto__": {"admin": true}}}');
      expect(response.status).to.equal(400);
      expect(await json(response)).to.deep.equal({ detail: 'The request body is not valid JSON.' });
    });
  });

  describe('Content-Encoding', () => {
    it('a garbage `Content-Encoding: br` body → 400, never 500', async () => {
      const response = await postJson('definitely not brotli', { 'Content-Encoding': 'br', 'Accept-Language': 'pt' });
      expect(response.status).to.equal(400);
      expect(await json(response)).to.deep.equal({ detail: 'Não foi possível ler o corpo do pedido.' });
      expect(app.logs.filter((line) => line.level >= 50)).to.deep.equal([]);
    });

    it('a real brotli body is read, and an encoding the api does not know → 415', async () => {
      expect((await postJson(brotliCompressSync('{"fine": true}'), { 'Content-Encoding': 'br' })).status).to.equal(200);
      const unknown = await postJson('{"fine": true}', { 'Content-Encoding': 'compress' });
      expect(unknown.status).to.equal(415);
      expect(await json(unknown)).to.deep.equal({ detail: 'Unsupported media type.' });
    });
  });

  describe('lone surrogates', () => {
    it('"\\ud800" in behavior_defaults of PATCH /api/v1/media/{id} → 422 naming the field; nothing is stored', async () => {
      const { user, client } = await signUpAndLogin(app);
      const { item } = await createItem(app, user.id, { behaviorDefaults: { when: 'intro' } });
      const response = await client.patch(`/api/v1/media/${item.id}`, { behavior_defaults: { when: 'outro', caption: 'a\ud800b' } });
      expect(response.status).to.equal(422);
      const body = await json(response);
      expect(body.code).to.equal('ValidationError');
      expect(body.detail).to.equal(
        'Validation error: body.behavior_defaults.caption: text must be valid Unicode (it contains an unpaired surrogate).',
      );
      const stored = await app.services.orm.em.fork().findOneOrFail(MediaItem, item.id);
      expect(stored.behaviorDefaults).to.deep.equal({ when: 'intro' });

      // A surrogate pair (an emoji) is valid text and is stored.
      const emoji = await client.patch(`/api/v1/media/${item.id}`, { behavior_defaults: { caption: 'ok \ud83c\udfac' } });
      expect(emoji.status).to.equal(200);
    });

    it('a lone surrogate anywhere in any body, key or value → 422 naming the field (en, pt, es)', async () => {
      const cases = [
        ['en', '{"outer": [{"name": "x\\udc00"}]}', 'Validation error: body.outer.0.name: text must be valid Unicode (it contains an unpaired surrogate).'],
        ['pt', '{"outer": {"\\ud83d": 1}}', 'Erro de validação: body.outer.\ud83d: o texto tem de ser Unicode válido (contém um substituto sem par).'],
        ['es', '["\\udfff"]', 'Error de validación: body.0: el texto debe ser Unicode válido (contiene un sustituto sin pareja).'],
      ] as const;
      for (const [language, body, detail] of cases) {
        const response = await postJson(body, { 'Accept-Language': language });
        expect(response.status, body).to.equal(422);
        expect((await json(response)).detail, body).to.equal(detail);
      }
      expect(app.logs.filter((line) => line.level >= 50)).to.deep.equal([]);
    });
  });
});
