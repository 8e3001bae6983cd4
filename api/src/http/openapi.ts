import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { ApiRouter } from './router.ts';

const require = createRequire(import.meta.url);
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);

/** The OpenAPI 3.1 document, generated from the zod schemas the routes validate with. */
function buildOpenApiDocument(router: ApiRouter, version: string) {
  // Security requirement objects AND their schemes: a read needs `session`, a mutation `session` and `csrf` (router.ts, securityOf).
  router.registry.registerComponent('securitySchemes', 'session', {
    type: 'apiKey',
    in: 'cookie',
    name: 'session',
    description: 'Session cookie set by login (HttpOnly).',
  });
  router.registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'crk_live_…',
    description:
      'An API key (POST /api/v1/users/me/api-keys), sent as `Authorization: Bearer <key>`. Its scopes: read (GET and HEAD), write (every other method), billing (payments and billing routes, any method); a missing scope is 403 naming it. No CSRF header with a key. Key management, credentials and account deletion take a session only.',
  });
  router.registry.registerComponent('securitySchemes', 'csrf', {
    type: 'apiKey',
    in: 'header',
    name: 'X-CSRF-Token',
    description:
      'On every POST, PUT, PATCH and DELETE of a session: the value of the csrf_token cookie that login sets (readable by the page). Missing or stale: 403.',
  });
  return new OpenApiGeneratorV31(router.registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Cutroom API',
      version,
      description:
        'Automated video-editing backend. Every error answers the `Error` schema: `{ detail, code?, errors? }` (`errors` on validation failures), and 5xx also carry `support_id`. ' +
        'Paths are matched in their exact letter case (another spelling is 404), and every /api/ request counts against the per-address limit (RATE_LIMIT_PER_IP). ' +
        'Every POST with a caller takes an `Idempotency-Key` header; any other request carrying one is 400 (code IdempotencyKeyNotTaken).',
    },
    servers: [{ url: '/' }],
    security: [{ session: [] }, { apiKey: [] }],
  });
}

/** `/api/v1/openapi.json` and a readable reference page at `/api/v1/docs` (Swagger UI, served locally). */
export function registerApiDocs(router: ApiRouter, version: string): void {
  let document: unknown;
  router.add({
    method: 'get',
    path: '/api/v1/openapi.json',
    summary: 'This API described as OpenAPI 3.1.',
    tags: ['documentation'],
    access: 'public',
    responses: { 200: { description: 'OpenAPI 3.1 document', schema: z.record(z.string(), z.unknown()) } },
    handler: (ctx) => {
      // Built on first use, when every feature has registered its routes.
      document ??= buildOpenApiDocument(router, version);
      ctx.body = document;
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/docs',
    summary: 'API reference page.',
    tags: ['documentation'],
    access: 'public',
    responses: { 200: { description: 'HTML page', schema: z.string(), contentType: 'text/html' } },
    handler: (ctx) => {
      ctx.type = 'text/html';
      ctx.set('Content-Security-Policy', DOCS_PAGE_CSP);
      ctx.body = DOCS_PAGE;
    },
  });
  router.add({
    method: 'get',
    path: '/api/v1/docs/assets/{file}',
    summary: 'Static assets of the reference page.',
    tags: ['documentation'],
    access: 'public',
    params: z.object({ file: z.string() }),
    responses: { 200: { description: 'Asset' } },
    handler: async (ctx, { params }) => {
      if (!ASSETS.has(params.file)) return; // falls through to 404
      ctx.type = params.file.split('.').pop()!;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = await readFile(join(swaggerDir, params.file));
    },
  });
}

// validatorUrl null: Swagger UI would otherwise send the document's address to validator.swagger.io.
// The interceptor sends the csrf_token cookie (readable by the page, as for any front end) as
// X-CSRF-Token on mutating requests, so "Try it out" works after login.
const DOCS_INIT_SCRIPT = `
window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
  requestInterceptor: (request) => {
    const cookie = document.cookie.split('; ').find((pair) => pair.startsWith('csrf_token='));
    if (cookie && !/^(GET|HEAD|OPTIONS)$/i.test(request.method)) request.headers['X-CSRF-Token'] = decodeURIComponent(cookie.slice(11));
    return request;
  } });
`;

/**
 * The reference page's own CSP, looser than the API's `default-src 'none'`: scripts and
 * styles from this origin plus the one inline script by its hash, Swagger UI's inline
 * styles and data: images, fetches to this origin only; still never framed.
 */
const DOCS_PAGE_CSP = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(DOCS_INIT_SCRIPT).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Cutroom API reference</title>
<link rel="icon" href="/api/v1/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/api/v1/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/api/v1/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/v1/docs/assets/swagger-ui-standalone-preset.js"></script>
<script>${DOCS_INIT_SCRIPT}</script>
</body>
</html>
`;
