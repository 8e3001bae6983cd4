import type { Registry } from 'prom-client';
import { z } from 'zod';
import type { ApiRouter } from '../http/router.ts';

export type Check = () => Promise<unknown>;

/** Operations endpoints: liveness, readiness naming what is down, Prometheus exposition. */
export function registerOpsRoutes(router: ApiRouter, deps: { checks: Record<string, Check>; metrics: Registry }): void {
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
    summary: 'Prometheus metrics.',
    tags: ['operations'],
    access: 'public',
    responses: { 200: { description: 'Prometheus text exposition', schema: z.string(), contentType: 'text/plain' } },
    handler: async (ctx) => {
      ctx.set('Content-Type', deps.metrics.contentType);
      ctx.body = await deps.metrics.metrics();
    },
  });
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
