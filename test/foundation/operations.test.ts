import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { freePort, startRedis } from '../support/local-servers.ts';

describe('operations endpoints', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it('/healthz answers while the process is up', async () => {
    const response = await app.fetch('/healthz');
    expect(response.status).to.equal(200);
    expect(await json(response)).to.deep.equal({ status: 'ok' });
  });

  it('/readyz is 200 when PostgreSQL, Redis and S3 are reachable', async () => {
    const response = await app.fetch('/readyz');
    expect(response.status).to.equal(200);
    expect(await json(response)).to.deep.equal({ status: 'ok', checks: { postgresql: 'ok', redis: 'ok', s3: 'ok' } });
  });

  it('/metrics exposes default metrics and the request duration histogram by route template and status', async () => {
    await app.fetch('/healthz');
    await app.fetch('/api/v1/docs/assets/swagger-ui.css');
    const response = await app.fetch('/metrics');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.contain('text/plain');
    const text = await response.text();
    expect(text).to.match(/^process_cpu_user_seconds_total \d/m);
    expect(text).to.match(/^nodejs_eventloop_lag_seconds /m);
    expect(text).to.contain('# TYPE http_request_duration_seconds histogram');
    expect(text).to.match(/^http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/healthz",status="200"\} \d+/m);
    // The template, never the raw path, labels the series.
    expect(text).to.contain('route="/api/v1/docs/assets/{file}"');
    expect(text).not.to.contain('swagger-ui.css');
  });

  it('/readyz is 503 naming Redis when Redis is stopped', async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    const local = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}/0` });
    try {
      expect((await local.fetch('/readyz')).status).to.equal(200);
      redis.kill('SIGKILL');
      await new Promise((resolve) => redis.once('exit', resolve));
      const response = await local.fetch('/readyz');
      expect(response.status).to.equal(503);
      const body = await json(response);
      expect(body.detail).to.equal('unreachable: redis');
      expect(body.checks).to.deep.equal({ postgresql: 'ok', redis: 'unreachable', s3: 'ok' });
    } finally {
      redis.kill('SIGKILL');
      await local.close();
    }
  });

  it('/readyz is 503 naming S3 when the object store is stopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cutroom-s3-stop-'));
    const s3 = await startEmbeddedS3({ directory: dir, bucket: 'stoppable', secretAccessKey: process.env.S3_SECRET_ACCESS_KEY! });
    const local = await startTestApp({ S3_ENDPOINT: s3.endpoint, S3_BUCKET: 'stoppable' });
    try {
      expect((await local.fetch('/readyz')).status).to.equal(200);
      await s3.close();
      const response = await local.fetch('/readyz');
      expect(response.status).to.equal(503);
      expect((await json(response)).detail).to.equal('unreachable: s3');
    } finally {
      await local.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('/readyz is 503 naming PostgreSQL when the database is unreachable', async () => {
    const port = await freePort();
    const local = await startTestApp({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere` });
    try {
      const response = await local.fetch('/readyz');
      expect(response.status).to.equal(503);
      expect((await json(response)).detail).to.equal('unreachable: postgresql');
    } finally {
      await local.close();
    }
  });
});

describe('API description', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it('GET /api/v1/openapi.json validates as OpenAPI 3.1', async () => {
    const response = await app.fetch('/api/v1/openapi.json');
    expect(response.status).to.equal(200);
    const document = await json(response);
    expect(document.openapi).to.equal('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('every route the app serves appears in the document', async () => {
    const document = await json(await app.fetch('/api/v1/openapi.json'));
    const served = app.router.stack.flatMap((layer) =>
      layer.methods.filter((method) => method !== 'HEAD').map((method) => [method.toLowerCase(), String(layer.path).replace(/:(\w+)/g, '{$1}')]),
    );
    expect(served.length).to.be.greaterThan(5);
    for (const [method, path] of served) expect(document.paths?.[path!]?.[method!], `${method} ${path}`).to.be.an('object');
  });

  it('/api/v1/docs is a readable reference page whose assets are served locally', async () => {
    const page = await app.fetch('/api/v1/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.contain('text/html');
    const html = await page.text();
    expect(html).to.contain('/api/v1/openapi.json');
    for (const asset of html.matchAll(/(?:src|href)="(\/api\/v1\/docs\/assets\/[^"]+)"/g)) {
      const response = await app.fetch(asset[1]!);
      expect(response.status, asset[1]).to.equal(200);
    }
    expect((await app.fetch('/api/v1/docs/assets/package.json')).status).to.equal(404);
  });
});
