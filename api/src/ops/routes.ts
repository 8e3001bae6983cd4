import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { ApiRouter } from '../http/router.ts';
import type { AppContext } from '../http/state.ts';
import { Unauthenticated } from '../shared/errors.ts';

type Check = () => Promise<unknown>;

export interface OpsDeps {
  checks: Record<string, Check>;
  metrics: Registry;
  /** METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
}

/** Operations endpoints: liveness, readiness naming what is down, Prometheus exposition. */
export function registerOpsRoutes(router: ApiRouter, deps: OpsDeps): void {
  router.add({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process is up.',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'Up', schema: z.object({ status: z.literal('ok') }) } },
    handler: (ctx) => {
      ctx.body = { status: 'ok' };
    },
  });

  router.add({
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: PostgreSQL, Redis and S3 reachable.',
    tags: ['operations'],
    access: 'public',
    responses: {
      200: { description: 'Ready', schema: ReadyBody },
      503: { description: 'A dependency is unreachable; `detail` names it.', schema: ReadyBody },
    },
    handler: async (ctx) => {
      const results = await Promise.all(
        Object.entries(deps.checks).map(async ([name, check]) => {
          try {
            await withTimeout(check(), 2500);
            return [name, 'ok'] as const;
          } catch {
            return [name, 'unreachable'] as const;
          }
        }),
      );
      const checks = Object.fromEntries(results);
      const down = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
      ctx.status = down.length ? 503 : 200;
      ctx.body = down.length
        ? { status: 'unavailable', detail: `unreachable: ${down.join(', ')}`, checks }
        : { status: 'ok', checks };
    },
  });

  router.add({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics; with METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>`.',
    tags: ['operations'],
    access: 'public',
    responses: {
      200: { description: 'Prometheus text exposition', schema: z.string(), contentType: 'text/plain' },
      401: { description: 'METRICS_TOKEN is set and the request does not carry it' },
    },
    handler: async (ctx) => {
      if (deps.metricsToken !== undefined) requireBearer(ctx, deps.metricsToken);
      ctx.set('Content-Type', deps.metrics.contentType);
      ctx.body = await deps.metrics.metrics();
    },
  });
}

/** 401 unless the request carries `token` as its bearer token (compared in constant time). */
function requireBearer(ctx: AppContext, token: string): void {
  const given = /^Bearer +(\S+)\s*$/i.exec(ctx.get('Authorization'))?.[1] ?? '';
  // Digests, so that lengths match and the comparison leaks nothing about the token.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  if (!timingSafeEqual(digest(given), digest(token))) {
    throw Unauthenticated('request.metrics_token_required', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } });
  }
}

const ReadyBody = z.object({
  status: z.enum(['ok', 'unavailable']),
  detail: z.string().optional(),
  checks: z.record(z.string(), z.enum(['ok', 'unreachable'])),
});

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
