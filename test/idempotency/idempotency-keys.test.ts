import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { ManualClock } from '../support/clock.ts';
import { projectWithSources } from '../support/projects.ts';
import { createItem } from '../media/library-fixtures.ts';
import { putBytes, putParts } from '../support/media-upload.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { resourceNamespace } from '../support/kube-cluster.ts';
import { PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from '../payments/payments-fixtures.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Invalid } from '../../api/src/shared/errors.ts';
import type { ApiRouter } from '../../api/src/http/router.ts';

/** One answer of a raced request, read whole. */
interface Answer {
  status: number;
  replayed: string | null;
  retryAfter: string | null;
  contentType: string | null;
  text: string;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    retryAfter: response.headers.get('retry-after'),
    contentType: response.headers.get('content-type'),
    text: await response.text(),
  };
}

/** `count` identical requests at once, over real HTTP. */
async function race(count: number, send: () => Promise<Response>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: count }, async () => answerOf(await send())));
}

/**
 * 20 identical requests at once, exactly one carried out (expectOneExecution), then one
 * more once all are answered: the first answer replayed, identical.
 */
async function raceAndRetry(send: () => Promise<Response>, status: number): Promise<Answer> {
  const original = expectOneExecution(await race(20, send), status);
  const retry = await answerOf(await send());
  expect(retry).to.deep.include({ status: original.status, replayed: 'true', text: original.text, contentType: original.contentType });
  return original;
}

/**
 * Exactly one answer did the work (`status`, not marked replayed); every other is that
 * same answer replayed (status, body and content type identical) or 409 with Retry-After.
 */
function expectOneExecution(answers: Answer[], status: number): Answer {
  const originals = answers.filter((answer) => !answer.replayed && answer.status !== 409);
  expect(originals, JSON.stringify(answers.map((answer) => [answer.status, answer.text.slice(0, 200)]))).to.have.length(1);
  const [original] = originals as [Answer];
  expect(original.status, original.text).to.equal(status);
  for (const answer of answers) {
    if (answer === original) continue;
    if (answer.status === 409) {
      expect(answer.retryAfter).to.equal('1');
      expect(JSON.parse(answer.text).code).to.equal('IdempotencyKeyInUse');
    } else {
      expect(answer.replayed).to.equal('true');
      expect({ status: answer.status, text: answer.text, contentType: answer.contentType }).to.deep.equal({ status: original.status, text: original.text, contentType: original.contentType });
    }
  }
  return original;
}

const keyed = (key: string) => ({ headers: { 'Idempotency-Key': key } });
const analyzeBody = { pacing_level: 50, false_start_sensitivity: 50, language: 'en' };

describe('idempotency keys: the POSTs that start work or move money, with Stripe semantics', function () {
  this.timeout(120_000);
  let namespace: string;
  let kubeConfig: KubeConfig;
  const MiB = 1024 * 1024;
  let world: PaymentsWorld;
  let app: TestApp;
  let clock: ManualClock;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-idempotency-'));
    ({ namespace, kubeConfig } = await resourceNamespace('idempotency'));
    clock = new ManualClock();
    // Jobs go to a cluster nobody runs: each stays queued, so the rows count what was started.
    world = await startPaymentsWorld(
      { JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace, MULTIPART_CUTOFF_BYTES: String(6 * MiB), MULTIPART_PART_SIZE_BYTES: String(5 * MiB) },
      { kubeConfig, clock },
    );
    app = world.app;
  });
  after(async () => {
    await world?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const sql = <Row>(text: string, values: unknown[]) => app.services.orm.em.fork().execute<Row[]>(text, values);
  async function jobsOf(userId: string): Promise<Record<string, number>> {
    const rows = await sql<{ program: string; count: string }>('select program, count(*) as count from jobs where user_id = ? group by program', [userId]);
    return Object.fromEntries(rows.map((row) => [row.program, Number(row.count)]));
  }
  const count = async (text: string, values: unknown[]) => Number((await sql<{ count: string }>(text, values))[0]!.count);
  const presignBody = (size = 1000) => ({ filename: 'talk.mp4', content_type: 'video/mp4', size_bytes: size, scope: 'library' });

  /** A project whose one source has audio, ready to analyze. */
  async function analyzable(user: SignedIn): Promise<string> {
    const projectId = await projectWithSources(app, user, [60_000]);
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { uploaderId: user.user.id }, { audioKey: 'audio/placeholder.m4a' });
    return projectId;
  }

  describe('20 identical requests at once: the work is done once, the others replay it or are told it is running (409)', () => {
    it('analyze → one analysis run, one credit reservation, one analyze job', async () => {
      const user = await signUpAndLogin(app, { credits: 5 });
      const projectId = await analyzable(user);
      const key = randomUUID();
      await raceAndRetry(() => user.client.post(`/api/v1/projects/${projectId}/analyze`, analyzeBody, keyed(key)), 200);
      expect(await count('select count(*) as count from analysis_runs where project_id = ?', [projectId])).to.equal(1);
      expect(await count(`select count(*) as count from credit_entries where user_id = ? and kind = 'reserve'`, [user.user.id])).to.equal(1);
      expect(await jobsOf(user.user.id)).to.deep.equal({ analyze: 1 });
    });

    it('export → one export row and one render job', async () => {
      const user = await signUpAndLogin(app, { tier: 'Creator' });
      const projectId = await projectWithSources(app, user, [4000]);
      const key = randomUUID();
      await raceAndRetry(() => user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Final' }, keyed(key)), 202);
      expect(await count('select count(*) as count from exports where project_id = ?', [projectId])).to.equal(1);
      expect(await jobsOf(user.user.id)).to.deep.equal({ render: 1 });
    });

    it('media edit (copy) → one new library item and one media-edit job', async () => {
      const user = await signUpAndLogin(app, { tier: 'Creator' });
      const { item } = await createItem(app, user.user.id, { file: { durationMs: 4000, hasAudio: true, kind: 'video' } });
      const body = { start_ms: 0, end_ms: 2000, extract_audio: false, save_mode: 'copy', fast_mode: false };
      await raceAndRetry(() => user.client.post(`/api/v1/media/${item.id}/edit`, body, keyed('edit-1')), 202);
      expect(await count('select count(*) as count from media_items where user_id = ?', [user.user.id])).to.equal(2);
      expect(await jobsOf(user.user.id)).to.deep.equal({ 'media-edit': 1 });
    });

    it('presign → one upload record (media file and item)', async () => {
      const user = await signUpAndLogin(app, { tier: 'Creator' });
      const original = await raceAndRetry(() => user.client.post('/api/v1/media/presign', presignBody(), keyed('presign-1')), 201);
      expect(await count('select count(*) as count from media_files where uploader_id = ?', [user.user.id])).to.equal(1);
      expect(await count('select count(*) as count from media_items where user_id = ?', [user.user.id])).to.equal(1);
      // the replay's presigned URL is the first one's (it may have expired: the client asks anew with a new key)
      expect(JSON.parse(original.text).upload_url).to.be.a('string');
    });

    it('confirm → one artifact job for the uploaded file', async () => {
      const user = await signUpAndLogin(app, { tier: 'Creator' });
      const started = await json(await user.client.post('/api/v1/media/presign', presignBody(1000)));
      await putBytes(started.upload_url, randomBytes(1000), 'video/mp4');
      await raceAndRetry(() => user.client.post(`/api/v1/media/${started.media_file_id}/confirm`, undefined, keyed('confirm-1')), 200);
      expect(await jobsOf(user.user.id)).to.deep.equal({ artifact: 1 });
    });

    it('multipart initiate → one upload record; multipart complete → one artifact job', async () => {
      const user = await signUpAndLogin(app, { tier: 'Creator' });
      const size = 6 * MiB + 1000;
      const initiated = await raceAndRetry(() => user.client.post('/api/v1/media/multipart/initiate', presignBody(size), keyed('initiate-1')), 201);
      expect(await count('select count(*) as count from media_files where uploader_id = ?', [user.user.id])).to.equal(1);
      const upload = JSON.parse(initiated.text);
      const path = join(dir, `multipart-${randomUUID()}.bin`);
      await writeFile(path, randomBytes(size));
      const parts = await putParts(user.client, path, upload.media_file_id, upload.part_size_bytes, upload.parts_count, upload.parts);
      const completeBody = { media_file_id: upload.media_file_id, parts };
      await raceAndRetry(() => user.client.post('/api/v1/media/multipart/complete', completeBody, keyed('complete-1')), 200);
      expect(await jobsOf(user.user.id)).to.deep.equal({ artifact: 1 });
    });

    it('checkout → one Stripe Checkout session; the replay carries its address', async () => {
      const user = await signUpAndLogin(app);
      const before = world.stripe.callsTo('POST', /^\/v1\/checkout\/sessions$/).length;
      const original = await raceAndRetry(() => user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth }, keyed('checkout-1')), 200);
      expect(world.stripe.callsTo('POST', /^\/v1\/checkout\/sessions$/).length - before).to.equal(1);
      expect(JSON.parse(original.text).url).to.be.a('string');
    });

    it('confirm-upgrade → one subscription change at Stripe; schedule-downgrade → one schedule', async () => {
      const user = await signUpAndLogin(app);
      const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
      const changes = () => world.stripe.callsTo('POST', new RegExp(`^/v1/subscriptions/${subscriptionId}$`)).length;
      const beforeUpgrade = changes();
      await raceAndRetry(() => user.client.post('/api/v1/payments/subscription/confirm-upgrade', { price_id: PRICE.creatorMonth }, keyed('upgrade-1')), 200);
      expect(changes() - beforeUpgrade).to.equal(1);
      await world.stripe.settled();
      const schedules = () => world.stripe.callsTo('POST', /^\/v1\/subscription_schedules$/).length;
      const beforeDowngrade = schedules();
      await raceAndRetry(() => user.client.post('/api/v1/payments/subscription/schedule-downgrade', { price_id: PRICE.hobbyMonth }, keyed('downgrade-1')), 200);
      expect(schedules() - beforeDowngrade).to.equal(1);
    });
  });

  it('the same key with a different body, or on another route → 422 IdempotencyKeyReused naming the first use; nothing is done', async () => {
    const user = await signUpAndLogin(app, { tier: 'Creator' });
    expect((await user.client.post('/api/v1/media/presign', presignBody(1000), keyed('k'))).status).to.equal(201);
    const otherBody = await user.client.post('/api/v1/media/presign', presignBody(2000), keyed('k'));
    expect(otherBody.status).to.equal(422);
    const problem = await json(otherBody);
    expect(problem.code).to.equal('IdempotencyKeyReused');
    expect(problem.detail).to.include('POST /api/v1/media/presign');
    const otherRoute = await user.client.post('/api/v1/media/multipart/initiate', presignBody(1000), keyed('k'));
    expect(otherRoute.status).to.equal(422);
    expect(await count('select count(*) as count from media_files where uploader_id = ?', [user.user.id])).to.equal(1);
    // key order and spacing are not a different body (the request is hashed in canonical form)
    const reordered = await user.fetch('/api/v1/media/presign', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k' },
      body: '{ "scope": "library", "size_bytes": 1000, "content_type": "video/mp4", "filename": "talk.mp4" }',
    });
    expect(reordered.status).to.equal(201);
    expect(reordered.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('two users with the same key are independent: each request is carried out', async () => {
    const [alice, bob] = await Promise.all([signUpAndLogin(app, { tier: 'Creator' }), signUpAndLogin(app, { tier: 'Creator' })]);
    const [first, second] = await Promise.all([alice, bob].map(async (user) => answerOf(await user.client.post('/api/v1/media/presign', presignBody(), keyed('shared-key')))));
    expect([first!.status, second!.status]).to.deep.equal([201, 201]);
    expect([first!.replayed, second!.replayed]).to.deep.equal([null, null]);
    expect(JSON.parse(first!.text).media_file_id).to.not.equal(JSON.parse(second!.text).media_file_id);
  });

  it('a 4xx the handler throws (402, credits insufficient) is kept and replayed even after credits arrive; a new key runs afresh', async () => {
    const user = await signUpAndLogin(app);
    const projectId = await analyzable(user);
    const first = await answerOf(await user.client.post(`/api/v1/projects/${projectId}/analyze`, analyzeBody, keyed('poor')));
    expect(first.status).to.equal(402);
    await app.services.billing.grantCredits(app.services.orm.em.fork(), user.user.id, { reference: 'test-grant', minutes: 5 });
    const replayed = await answerOf(await user.client.post(`/api/v1/projects/${projectId}/analyze`, analyzeBody, keyed('poor')));
    expect(replayed).to.deep.include({ status: 402, replayed: 'true', text: first.text });
    expect(await jobsOf(user.user.id)).to.deep.equal({});
    expect((await user.client.post(`/api/v1/projects/${projectId}/analyze`, analyzeBody, keyed('rich'))).status).to.equal(200);
  });

  it('a body failing validation is not kept: the key is still free for the corrected request', async () => {
    const user = await signUpAndLogin(app, { tier: 'Creator' });
    const invalid = await user.client.post('/api/v1/media/presign', { ...presignBody(), size_bytes: -1 }, keyed('fix-me'));
    expect(invalid.status).to.equal(422);
    const corrected = await user.client.post('/api/v1/media/presign', presignBody(), keyed('fix-me'));
    expect(corrected.status).to.equal(201);
    expect(corrected.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('a 5xx is not kept (Stripe unreachable → 503): the retry with the same key runs and starts one Checkout session', async () => {
    const user = await signUpAndLogin(app);
    const sessions = () => world.stripe.callsTo('POST', /^\/v1\/checkout\/sessions$/).length;
    const before = sessions();
    await world.stripe.stop();
    try {
      expect((await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth }, keyed('flaky'))).status).to.equal(503);
    } finally {
      await world.stripe.resume();
    }
    const retried = await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth }, keyed('flaky'));
    expect(retried.status, await retried.clone().text()).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    expect(sessions() - before).to.equal(1);
  });

  it('a key is kept 24 hours: past them the same key runs the request again (and the sweep deletes it)', async () => {
    const user = await signUpAndLogin(app, { tier: 'Creator' });
    const first = await json(await user.client.post('/api/v1/media/presign', presignBody(), keyed('daily')));
    // a CSRF token lives less than a day: the user signs in again, the keys are the user's, not the session's
    const signInAgain = async () => expect((await user.client.logIn(user.username, user.password)).status).to.equal(200);
    clock.advance(24 * 3600 * 1000 - 1000);
    await signInAgain();
    const within = await user.client.post('/api/v1/media/presign', presignBody(), keyed('daily'));
    expect(within.status, await within.clone().text()).to.equal(201);
    expect(within.headers.get('idempotent-replayed')).to.equal('true');
    expect((await json(within)).media_file_id).to.equal(first.media_file_id);
    clock.advance(2000);
    await signInAgain();
    const after = await user.client.post('/api/v1/media/presign', presignBody(2000), keyed('daily'));
    expect(after.status, 'another body is no conflict once the key expired').to.equal(201);
    expect(after.headers.get('idempotent-replayed')).to.equal(null);
    const keys = () => count('select count(*) as count from idempotency_keys where user_id = ?', [user.user.id]);
    expect(await keys()).to.equal(1);
    clock.advance(24 * 3600 * 1000 + 1000);
    expect(await app.services.features.idempotency.sweep(clock.now())).to.be.at.least(1);
    expect(await keys()).to.equal(0);
  });

  it('a request still running under the key holds it (409); a lease that ran out (its replica died) lets the next request run', async () => {
    const user = await signUpAndLogin(app, { tier: 'Creator' });
    expect((await user.client.post('/api/v1/media/presign', presignBody(), keyed('crash'))).status).to.equal(201);
    // back to running, as a replica that died mid-request leaves it
    const running = (leaseEnd: Date) =>
      sql(`update idempotency_keys set response_status = null, response_body = null, response_headers = null, lease_expires_at = ? where user_id = ? and key = 'crash'`, [leaseEnd, user.user.id]);
    await running(new Date(clock.now().getTime() + 60_000));
    const held = await user.client.post('/api/v1/media/presign', presignBody(), keyed('crash'));
    expect(held.status).to.equal(409);
    expect(held.headers.get('retry-after')).to.equal('1');
    await running(new Date(clock.now().getTime() - 1000));
    const taken = await user.client.post('/api/v1/media/presign', presignBody(), keyed('crash'));
    expect(taken.status).to.equal(201);
    expect(taken.headers.get('idempotent-replayed')).to.equal(null);
    expect(await count('select count(*) as count from media_files where uploader_id = ?', [user.user.id])).to.equal(2);
  });

  it('without the header nothing changes: two exports are two exports, and a second analyze is still 409 (already analyzing)', async () => {
    const user = await signUpAndLogin(app, { tier: 'Creator', credits: 5 });
    const projectId = await analyzable(user);
    for (let i = 0; i < 2; i++) expect((await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: `Cut ${i}` })).status).to.equal(202);
    expect((await user.client.post(`/api/v1/projects/${projectId}/analyze`, analyzeBody)).status).to.equal(200);
    expect((await user.client.post(`/api/v1/projects/${projectId}/analyze`, analyzeBody)).status).to.equal(409);
    expect((await jobsOf(user.user.id)).render).to.equal(2);
    expect(await count('select count(*) as count from idempotency_keys where user_id = ?', [user.user.id])).to.equal(0);
  });

  it('a malformed key → 400 ValidationError before anything is done (empty, over 255 characters, a control character)', async () => {
    const user = await signUpAndLogin(app, { tier: 'Creator' });
    for (const key of ['', 'x'.repeat(256), 'a\tb']) {
      const response = await user.client.post('/api/v1/media/presign', presignBody(), keyed(key));
      expect(response.status, JSON.stringify(key)).to.equal(400);
      const problem = await json(response);
      expect(problem.code).to.equal('ValidationError');
      expect(problem.detail).to.include('Idempotency-Key');
    }
    expect((await user.client.post('/api/v1/media/presign', presignBody(), keyed('x'.repeat(255)))).status).to.equal(201);
    expect(await count('select count(*) as count from media_files where uploader_id = ?', [user.user.id])).to.equal(1);
  });

  it('the OpenAPI document names the Idempotency-Key header on every POST with a caller, and on no other operation (which declares the 400 it gets)', async () => {
    const document = await json(await app.fetch('/api/v1/openapi.json'));
    const keyed: string[] = [];
    const expected: string[] = [];
    type Operation = { parameters?: { in: string; name: string }[]; security?: unknown[]; responses: Record<string, { description: string }> };
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (operation.parameters?.some((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key')) keyed.push(name);
        if (method === 'post' && (operation.security?.length ?? 0) > 0) expected.push(name);
        else expect(operation.responses['400']?.description, name).to.match(/IdempotencyKeyNotTaken/);
      }
    }
    expect(keyed.sort()).to.deep.equal(expected.sort());
    expect(keyed).to.include.members(['POST /api/v1/projects/', 'POST /api/v1/media/presign', 'POST /api/v1/users/me/webhooks/{webhook_id}/rotate-secret']);
    expect(keyed).to.not.include.members(['POST /api/v1/auth/login', 'POST /api/v1/users/', 'POST /api/v1/payments/webhook']);
    const presign = document.paths['/api/v1/media/presign'].post;
    expect(presign.responses['201'].headers).to.have.property('Idempotent-Replayed');
    expect(presign.responses['422'].description).to.match(/Idempotency-Key was already used/);
  });

  it('attack: a retried POST outside the former list (POST /api/v1/projects/) made two projects: the same key and body now answer the first project, another body is 422', async () => {
    const user = await signUpAndLogin(app);
    const first = await user.client.post('/api/v1/projects/', { name: 'Retried' }, keyed('project-once'));
    const again = await user.client.post('/api/v1/projects/', { name: 'Retried' }, keyed('project-once'));
    expect([first.status, again.status]).to.deep.equal([201, 201]);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await json(again)).uuid).to.equal((await json(first)).uuid);
    const other = await user.client.post('/api/v1/projects/', { name: 'Another' }, keyed('project-once'));
    expect(other.status).to.equal(422);
    expect((await json(other)).code).to.equal('IdempotencyKeyReused');
    expect(await count("select count(*) as count from projects where user_id = ? and name in ('Retried', 'Another')", [user.user.id])).to.equal(1);
  });

  it('attack: a key where none is taken (a public POST, a GET, a PATCH) is refused with 400 IdempotencyKeyNotTaken, never silently ignored; nothing is done', async () => {
    const user = await signUpAndLogin(app);
    const signup = await app.fetch('/api/v1/users/', { method: 'POST', headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k1' }, body: JSON.stringify({ name: 'N', username: `u${randomBytes(4).toString('hex')}`, email: `${randomUUID()}@example.com`, password: 'correct horse battery' }) });
    expect(signup.status).to.equal(400);
    expect((await json(signup)).code).to.equal('IdempotencyKeyNotTaken');
    const list = await user.client.get('/api/v1/projects/', keyed('k2'));
    expect(list.status).to.equal(400);
    expect((await json(list)).detail).to.match(/only a POST/);
    const endpoint = await json(await user.client.post('/api/v1/users/me/webhooks', { url: 'https://93.184.215.14/in', event_types: ['media.ready'] }));
    const patched = await user.client.patch(`/api/v1/users/me/webhooks/${endpoint.id}`, { description: 'Renamed' }, keyed('k3'));
    expect(patched.status).to.equal(400);
    expect((await json(patched)).code).to.equal('IdempotencyKeyNotTaken');
    expect((await json(await user.client.get(`/api/v1/users/me/webhooks/${endpoint.id}`))).description).to.not.equal('Renamed');
  });
});

describe('idempotency keys: any path the first request takes, and several api replicas', function () {
  this.timeout(60_000);
  let calls: Record<string, number>;
  let replicas: TestApp[];

  /** Purpose-built idempotent routes: one that fails with an unexpected error once, one that throws a 4xx, one with a large answer. */
  function extend(router: ApiRouter): void {
    const route = (name: string, handler: Parameters<ApiRouter['add']>[0]['handler'], idempotent?: Parameters<ApiRouter['add']>[0]['idempotent']) =>
      router.add({
        method: 'post',
        path: `/api/v1/test-idempotency/${name}`,
        summary: name,
        tags: ['test'],
        access: 'session',
        scope: 'write',
        ...(idempotent ? { idempotent } : {}),
        responses: { 200: { description: 'done' } },
        handler: async (ctx, input) => {
          calls[name] = (calls[name] ?? 0) + 1;
          await handler(ctx, input);
        },
      });
    route('crash-once', (ctx) => {
      if (calls['crash-once'] === 1) throw new Error('boom');
      ctx.body = { attempt: calls['crash-once'] };
    });
    route('refuse', () => {
      throw Invalid('http.422', { code: 'Refused' });
    });
    route('large', (ctx) => {
      ctx.body = { filler: 'x'.repeat(300 * 1024) };
    });
    route(
      'secret',
      (ctx) => {
        ctx.status = 201;
        ctx.body = { id: `secret-${calls.secret}`, secret: `shown-once-${randomUUID()}` };
      },
      { withheld: ['secret'] },
    );
    route('created', (ctx) => {
      ctx.status = 201;
      ctx.set('Location', `/api/v1/things/${calls.created}`);
      ctx.body = { n: calls.created };
    });
  }

  before(async () => {
    calls = {};
    replicas = await Promise.all([startTestApp({}, {}, { extend }), startTestApp({}, {}, { extend })]);
  });
  after(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  it('an unexpected error (500 through the error middleware) is not kept: the retry runs the handler again', async () => {
    const user = await signUpAndLogin(replicas[0]!);
    const first = await user.client.post('/api/v1/test-idempotency/crash-once', undefined, keyed('crash'));
    expect(first.status).to.equal(500);
    const second = await user.client.post('/api/v1/test-idempotency/crash-once', undefined, keyed('crash'));
    expect(second.status).to.equal(200);
    expect(await json(second)).to.deep.equal({ attempt: 2 });
  });

  it('a domain error thrown by the handler is kept as the error middleware answered it, and replayed without running again', async () => {
    const user = await signUpAndLogin(replicas[0]!);
    const first = await answerOf(await user.client.post('/api/v1/test-idempotency/refuse', undefined, keyed('no')));
    const again = await answerOf(await user.client.post('/api/v1/test-idempotency/refuse', undefined, keyed('no')));
    expect(first.status).to.equal(422);
    expect(JSON.parse(first.text).code).to.equal('Refused');
    expect(again).to.deep.include({ status: 422, replayed: 'true', text: first.text, contentType: first.contentType });
    expect(calls.refuse).to.equal(1);
  });

  it('Location and Content-Type are replayed with the status and body', async () => {
    const user = await signUpAndLogin(replicas[0]!);
    const first = await user.client.post('/api/v1/test-idempotency/created', undefined, keyed('loc'));
    const again = await user.client.post('/api/v1/test-idempotency/created', undefined, keyed('loc'));
    expect([first.status, again.status]).to.deep.equal([201, 201]);
    expect(again.headers.get('location')).to.equal(first.headers.get('location'));
    expect(again.headers.get('content-type')).to.equal(first.headers.get('content-type'));
    expect(await again.text()).to.equal(await first.text());
    expect(again.headers.get('x-request-id'), 'the replay has its own request id').to.not.equal(first.headers.get('x-request-id'));
  });

  it('a secret shown once (withheld) is never stored: the replay has the same id and the secret null', async () => {
    const user = await signUpAndLogin(replicas[0]!);
    const first = await json(await user.client.post('/api/v1/test-idempotency/secret', undefined, keyed('once')));
    expect(first.secret).to.match(/^shown-once-/);
    const stored = await replicas[0]!.services.orm.em.fork().execute<{ response_body: string }[]>(`select response_body from idempotency_keys where user_id = ? and key = 'once'`, [user.user.id]);
    expect(stored[0]!.response_body).to.not.include(first.secret);
    const again = await user.client.post('/api/v1/test-idempotency/secret', undefined, keyed('once'));
    expect(again.status).to.equal(201);
    expect(await json(again)).to.deep.equal({ id: first.id, secret: null });
    expect(calls.secret).to.equal(1);
  });

  it('a response over the kept size (256 KiB) keeps the key used: the retry is 409 IdempotentResponseNotKept, never a second run', async () => {
    const user = await signUpAndLogin(replicas[0]!);
    expect((await user.client.post('/api/v1/test-idempotency/large', undefined, keyed('big'))).status).to.equal(200);
    const again = await user.client.post('/api/v1/test-idempotency/large', undefined, keyed('big'));
    expect(again.status).to.equal(409);
    expect((await json(again)).code).to.equal('IdempotentResponseNotKept');
    expect(calls.large).to.equal(1);
  });

  it('two api replicas on one database: 20 requests with one key, split between them, create one upload', async () => {
    const user = await signUpAndLogin(replicas[0]!, { tier: 'Creator' });
    // the same session cookie works against both replicas (sessions live in Redis and PostgreSQL)
    const send = (index: number) =>
      fetch(`${replicas[index % 2]!.url}/api/v1/media/presign`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: `session=${user.client.cookies.get('session')}; csrf_token=${user.csrf}`, 'X-CSRF-Token': user.csrf, 'Idempotency-Key': 'replicas' },
        body: JSON.stringify({ filename: 'talk.mp4', content_type: 'video/mp4', size_bytes: 1000, scope: 'library' }),
      });
    let index = 0;
    await raceAndRetry(() => send(index++), 201);
    const files = await replicas[1]!.services.orm.em.fork().execute<{ count: string }[]>('select count(*) as count from media_files where uploader_id = ?', [user.user.id]);
    expect(Number(files[0]!.count)).to.equal(1);
  });
});
