import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Middleware } from 'koa';
import type { Config } from '../config.ts';
import type { AppState } from '../http/state.ts';

/** Where hack/studio.sh writes the bundle (studio/build.ts): index.html and assets/. */
export const STUDIO_BUNDLE_DIR = join(import.meta.dirname, '../../../studio/dist');

/** The pages the e-mailed links open; a link mailed before the studio existed (no /studio prefix) is sent on to its page. */
export const LINK_PAGES = ['/verify-email', '/reset-password', '/confirm-email-change', '/forgot-password'] as const;

const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const ASSET_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.txt': 'text/plain; charset=utf-8' };

/**
 * The studio's CSP: its own scripts only; styles of its own plus inline ones (wavesurfer.js
 * styles its shadow root with a <style> element); the api and the object store for data
 * (uploads PUT to presigned URLs, playback may be a presigned GET); no frames, no plugins.
 */
export function studioCsp(config: Pick<Config, 'S3_ENDPOINT' | 'S3_PUBLIC_ENDPOINT' | 'S3_REGION'>): string {
  const endpoint = config.S3_PUBLIC_ENDPOINT ?? config.S3_ENDPOINT;
  const store = endpoint ? new URL(endpoint).origin : `https://*.s3.${config.S3_REGION}.amazonaws.com https://s3.${config.S3_REGION}.amazonaws.com`;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob: ${store}`,
    `media-src 'self' blob: ${store}`,
    `connect-src 'self' ${store}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Serves the studio at /studio/: hashed assets cached for a year, and for every other path
 * under it the page (no-cache; the studio routes in the browser), so a reload or an e-mailed
 * link opens the right screen. `/` and the bare link paths redirect there. The studio talks to
 * the api on this same origin: the session cookie and X-CSRF-Token, nothing else.
 */
export function studio(config: Config, directory = STUDIO_BUNDLE_DIR): Middleware<AppState> {
  const csp = studioCsp(config);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const path = ctx.path;
    if (path === '/' || path === '/studio') return redirect(ctx, '/studio/');
    if ((LINK_PAGES as readonly string[]).includes(path)) return redirect(ctx, `/studio${path}${ctx.search}`);
    if (!path.startsWith('/studio/')) return next();

    if (path.startsWith('/studio/assets/')) {
      const name = path.slice('/studio/assets/'.length);
      const type = ASSET_TYPES[extname(name)];
      const body = ASSET_NAME.test(name) && type ? await readFile(join(directory, 'assets', name)).catch(() => null) : null;
      if (!body) return next(); // the api's 404
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = type!;
      ctx.body = body;
      return;
    }
    const page = await readFile(join(directory, 'index.html')).catch(() => null);
    ctx.set('Cache-Control', 'no-cache');
    if (!page) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The studio is not built: run hack/studio.sh (hack/up.sh builds it when it is missing).\n';
      return;
    }
    ctx.set('Content-Security-Policy', csp);
    ctx.type = 'text/html; charset=utf-8';
    // the upload path the api chooses by declared size: the studio must choose the same
    ctx.body = page.toString('utf8').replace(/(<meta name="cutroom-multipart-cutoff" content=")\d+/, `$1${config.MULTIPART_CUTOFF_BYTES}`);
  };
}

function redirect(ctx: Parameters<Middleware<AppState>>[0], target: string): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(target);
}
