import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { isDependencyOutage } from '../../api/src/ops/dependency-outage.ts';
import { freePort, startRedis, stopRedis } from '../support/local-servers.ts';

const UNAVAILABLE = {
  en: /^The service is temporarily unavailable\. Try again in a moment; if it persists, quote support id ([\w-]{8})\.$/,
  pt: /^O serviço está temporariamente indisponível\. Tente de novo dentro de instantes; se persistir, cite o código de suporte ([\w-]{8})\.$/,
  es: /^El servicio no está disponible temporalmente\. Inténtelo de nuevo en un momento; si persiste, indique el código de soporte ([\w-]{8})\.$/,
} as const;

/** The 503 every request gets while a dependency is down: localized, Retry-After, a support id that is in the log. */
async function expectOutageAnswer(app: TestApp, response: Response, language: keyof typeof UNAVAILABLE): Promise<void> {
  expect(response.status).to.equal(503);
  expect(response.headers.get('retry-after')).to.equal('5');
  const body = await json(response);
  const match = UNAVAILABLE[language].exec(body.detail);
  expect(match, body.detail).to.not.equal(null);
  expect(body.support_id).to.equal(match![1]);
  const line = app.logs.find((entry) => entry.support_id === body.support_id);
  expect(line?.status).to.equal(503);
}

const login = (app: TestApp, language: string) =>
  app.fetch('/api/v1/auth/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'nobody_here', password: 'irrelevant' }).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Accept-Language': language },
  });

describe('a dependency that is down → 503, never 500', () => {
  it('PostgreSQL unreachable (connection refused) → 503 with a localized message, Retry-After and a support id', async () => {
    const app = await startTestApp({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere` });
    try {
      const signup = await app.fetch('/api/v1/users/', {
        method: 'POST',
        body: JSON.stringify({ name: 'Outage', username: 'outage_user', email: 'outage@example.test', password: 'a-Long-passw0rd!' }),
        headers: { 'Content-Type': 'application/json', 'Accept-Language': 'es' },
      });
      await expectOutageAnswer(app, signup, 'es');
      await expectOutageAnswer(app, await login(app, 'en'), 'en');
    } finally {
      await app.close();
    }
  });

  /** A test app on a Redis of its own, which `breakRedis` takes away before the request. */
  async function withOwnRedis(breakRedis: (app: TestApp, redis: ChildProcess) => Promise<void> | void, language: keyof typeof UNAVAILABLE) {
    const port = await freePort();
    const redis = await startRedis(port);
    const app = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}/0` });
    try {
      expect((await login(app, 'en')).status).to.equal(401);
      await breakRedis(app, redis);
      await expectOutageAnswer(app, await login(app, language), language);
    } finally {
      await stopRedis(redis);
      await app.close();
    }
  }

  it('Redis stopped (ioredis gives up after its retries) → 503', () => withOwnRedis((_app, redis) => stopRedis(redis), 'pt'));

  it('Redis connection closed ("Connection is closed.") → 503', () =>
    // No reconnection: every command now fails at once.
    withOwnRedis((app) => app.services.redis.disconnect(), 'en'));

  it('the shapes of an outage are recognised, and other failures are not', () => {
    const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
    const outages = [
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is starting up', '57P03'),
      withCode('sorry, too many clients already', '53300'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection is closed.'),
      Object.assign(new Error('Reached the max retries per request limit (which is 2).'), { name: 'MaxRetriesPerRequestError' }),
      new TypeError('fetch failed', { cause: withCode('getaddrinfo EAI_AGAIN s3', 'EAI_AGAIN') }),
    ];
    for (const error of outages) expect(isDependencyOutage(error), String(error)).to.equal(true);
    const others = [
      new Error('kaboom'),
      withCode('duplicate key value violates unique constraint', '23505'),
      withCode('syntax error at or near "select"', '42601'),
      withCode('invalid message format', '08P01'), // what PostgreSQL answers to a NUL inlined into SQL text
      withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021'),
      'ECONNREFUSED',
      null,
    ];
    for (const error of others) expect(isDependencyOutage(error), String(error)).to.equal(false);
  });
});
