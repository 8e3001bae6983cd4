/**
 * Fuzz campaign over the served OpenAPI document: at least FUZZ_CASES (10,000) seeded cases
 * across every operation, sent as a logged-in user with its CSRF token, against the real
 * app on a fresh PostgreSQL database, Redis key prefix and embedded S3. Every answer ≥ 500
 * is printed as the request that caused it. Target: none.
 *
 *   node bench/fuzz/run.ts            (FUZZ_SEED=<n> replays a run; FUZZ_CASES=<n> sets the size)
 *
 * Payments talk to the Stripe double of hack/fixtures/stripe-double.ts.
 */
import { StripeDouble } from '../../hack/fixtures/stripe-double.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, createServices } from '../../api/src/app.ts';
import { loadConfig } from '../../api/src/config.ts';
import { startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { benchDatabase } from '../api/servers.ts';
import { runCampaign } from './campaign.ts';
import type { Actor } from './cases.ts';
import { operationsOf, MUTATING_METHODS, type OpenApiDocument } from './operations.ts';
import { seedFromEnv } from './random.ts';
import { World } from './world.ts';

const TARGET_CASES = 10_000;
const wanted = Number(process.env.FUZZ_CASES ?? TARGET_CASES);
const seed = seedFromEnv();
const say = (line = '') => process.stdout.write(`${line}\n`);

const runId = `${process.pid}_${Date.now().toString(36)}`;

/** A logged-in browser: keeps the cookies the api sets and sends the CSRF cookie back as X-CSRF-Token on mutations. */
class Session implements Actor {
  readonly cookies = new Map<string, string>();
  readonly baseUrl: string;
  readonly userId: string;

  constructor(baseUrl: string, userId: string) {
    this.baseUrl = baseUrl;
    this.userId = userId;
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('Cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const csrf = this.cookies.get('csrf_token');
    if (csrf && MUTATING_METHODS.has((init.method ?? 'GET').toUpperCase()) && !headers.has('X-CSRF-Token')) headers.set('X-CSRF-Token', csrf);
    const response = await fetch(new URL(path, this.baseUrl), { redirect: 'manual', ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value && !/max-age=0/i.test(line)) this.cookies.set(pair.slice(0, eq).trim(), value);
      else this.cookies.delete(pair.slice(0, eq).trim());
    }
    return response;
  }

  async logIn(username: string, password: string): Promise<void> {
    const response = await this.fetch('/api/v1/auth/login', {
      method: 'POST',
      body: new URLSearchParams({ username, password }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  }
}

/** The Stripe stand-in of the tests (hack/fixtures, since bench imports nothing from test/). */
async function startStripe() {
  const secret = 'whsec_cutroom_fuzz';
  const double = await StripeDouble.start({ webhookSecret: secret });
  return {
    env: { STRIPE_SECRET_KEY: 'sk_test_cutroom_fuzz', STRIPE_WEBHOOK_SECRET: secret, STRIPE_API_BASE: double.url, STRIPE_TIMEOUT_MS: '2000', STRIPE_MAX_NETWORK_RETRIES: '0' },
    attach: (url: string) => {
      double.webhookUrl = `${url}/api/v1/payments/webhook`;
    },
    close: () => double.close(),
  };
}

const database = await benchDatabase(`cutroom_fuzz_${runId}`);
const s3Dir = await mkdtemp(join(tmpdir(), 'cutroom-fuzz-s3-'));
const s3 = await startEmbeddedS3({ directory: s3Dir, bucket: 'cutroom-fuzz' });
const stripe = await startStripe();
let failed = true;
try {
  const config = loadConfig({
    ...process.env,
    ...stripe.env,
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'fatal',
    // The fuzz sends thousands of password checks (login, verify-password…); their cost is not what is measured.
    BCRYPT_COST: '4',
    // Each case comes from an address of its own (X-Forwarded-For), so per-IP limits and lockouts never stop the owner.
    TRUST_PROXY: 'true',
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
    REDIS_KEY_PREFIX: `cutroom-fuzz:${runId}:`,
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    S3_REGION: 'us-east-1',
  });
  const services = await createServices(config);
  const { koa } = buildApp(services);
  const server: Server = await new Promise((resolve) => {
    const listening = koa.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  services.baseUrl = url;
  stripe.attach(url);
  try {
    const em = services.orm.em.fork();
    const password = `fuzz-${runId}`;
    const username = `fuzz_${runId}`.slice(0, 40);
    const user = await services.accounts.createVerifiedAccount(em, { name: 'Fuzz owner', username, email: `${username}@example.test`, password, locale: 'en', superuser: false });
    await services.billing.setPlan(em, user.id, { tier: 'Viral', status: 'active' });
    await services.billing.grantCredits(em, user.id, { reference: 'fuzz-grant', minutes: 100 });
    const owner = new Session(url, user.id);
    await owner.logIn(username, password);

    const document = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as OpenApiDocument;
    const operations = operationsOf(document);
    const world = new World(owner, services.orm, document);
    await world.prepare();
    const rounds = Math.ceil(wanted / operations.length);
    say(`fuzz seed ${seed} (FUZZ_SEED=${seed} replays it): ${operations.length} operations × ${rounds} rounds`);
    const started = process.hrtime.bigint();
    const result = await runCampaign({
      document, world, owner, seed, rounds, operations,
      renewSession: () => owner.logIn(username, password),
      onCase: (index) => {
        if (index % 1000 === 0) say(`  ${index} cases`);
      },
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;

    say(`\n${result.cases} cases in ${seconds.toFixed(1)} s (${(result.cases / seconds).toFixed(0)} per second); owner logged in again ${result.sessionsRenewed} times`);
    say(`answers by status: ${[...result.statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(' ')}`);
    const byOperation = new Map<string, number>();
    for (const finding of result.findings) byOperation.set(finding.fuzzCase.operation.name, (byOperation.get(finding.fuzzCase.operation.name) ?? 0) + 1);
    for (const [name, count] of byOperation) say(`  ${count} answers ≥ 500 from ${name}`);
    for (const finding of result.findings.slice(0, 50)) say(`  ${finding.description}`);
    if (result.findings.length > 50) say(`  … and ${result.findings.length - 50} more`);

    const casesOk = result.cases >= TARGET_CASES;
    const clean = result.findings.length === 0;
    say(`RESULT fuzz_cases ${result.cases} (target >= ${TARGET_CASES}) ${casesOk ? 'ok' : 'miss'}`);
    const covered = result.answered.size === operations.length;
    say(`RESULT fuzz_operations ${result.answered.size} (target = ${operations.length}) ${covered ? 'ok' : 'miss'}`);
    say(`RESULT fuzz_5xx ${result.findings.length} (target = 0) ${clean ? 'ok' : 'miss'}`);
    failed = !(casesOk && clean && covered);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await services.close();
  }
} finally {
  await stripe.close();
  await s3.close();
  await rm(s3Dir, { recursive: true, force: true });
  await database.drop();
  const { Redis } = await import('ioredis');
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const keys = await redis.keys(`cutroom-fuzz:${runId}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}
process.exitCode = failed ? 1 : 0;
