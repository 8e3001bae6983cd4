import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { ManualClock } from '../support/clock.ts';
import { SmtpSink } from '../support/smtp.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { suiteReceivers } from '../support/webhook-receiver.ts';
import { WebhookDelivery, WebhookEndpoint, type WebhookDeliveryRow } from '../../api/src/webhooks/entities.ts';
import { RETRY_SCHEDULE_MS } from '../../api/src/webhooks/delivery.ts';
import { createWebhooks } from '../../api/src/webhooks/feature.ts';
import type { Resolver } from '../../api/src/webhooks/targets.ts';

const WEBHOOKS = '/api/v1/users/me/webhooks';

/** Names the tests' receivers go by; anything else is not found. */
function tableResolver(table: Map<string, string>): Resolver {
  return async (hostname) => {
    const address = table.get(hostname);
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address, family: 4 }];
  };
}

async function register(user: SignedIn, url: string, eventTypes: string[] = ['credits.updated']): Promise<{ id: string; secret: string }> {
  const response = await user.client.post(WEBHOOKS, { url, event_types: eventTypes });
  expect(response.status, await response.clone().text()).to.equal(201);
  return json(response);
}

/** A real change that owes a `credits.updated` event: minutes granted, in their own transaction. */
async function grantMinutes(app: TestApp, user: SignedIn, reference: string): Promise<void> {
  await app.services.orm.em.fork().transactional((em) => app.services.billing.grantCredits(em, user.user.id, { reference, minutes: 1 }));
}

function deliveriesOf(app: TestApp, endpointId: string): Promise<WebhookDeliveryRow[]> {
  return app.services.orm.em.fork().find(WebhookDelivery, { endpoint: endpointId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

describe('webhook delivery (real clock)', () => {
  let app: TestApp;
  const names = new Map<string, string>();
  const receivers = suiteReceivers();
  const receiver = () => receivers.start();

  before(async () => {
    app = await startTestApp(
      { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_CONCURRENCY: '2' },
      { webhookResolver: tableResolver(names) },
    );
    names.set('hooks.test', '127.0.0.1');
  });
  after(async () => {
    await app.close();
    await receivers.closeAll();
  });

  it('a delivery carries webhook-id, webhook-timestamp and webhook-signature that standardwebhooks verifies, and the event as JSON', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    const endpoint = await register(user, target.url('hooks.test'));
    await grantMinutes(app, user, 'signed');
    const [got] = await target.waitFor(1);
    const verified = new Webhook(endpoint.secret).verify(got!.body, got!.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(verified.type).to.equal('credits.updated');
    expect(verified.data).to.deep.equal({ change: 'grant', minutes: 1, balance: 1, reserved: 0, available: 1 });
    expect(got!.headers['webhook-id']).to.match(/^msg_[0-9a-f]{32}$/);
    expect(got!.headers['content-type']).to.equal('application/json');
    // a body changed in transit, or another endpoint's secret, does not verify
    expect(() => new Webhook(endpoint.secret).verify(got!.body.replace('"minutes":1', '"minutes":9'), got!.headers as Record<string, string>)).to.throw();
    const other = await register(user, target.url());
    expect(() => new Webhook(other.secret).verify(got!.body, got!.headers as Record<string, string>)).to.throw();
  });

  it('the event of a change that rolls back is never recorded nor sent (the outbox row is written in the change\'s transaction)', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    const endpoint = await register(user, target.url());
    const failed = await app.services.orm.em
      .fork()
      .transactional(async (em) => {
        await app.services.billing.grantCredits(em, user.user.id, { reference: 'rolled-back', minutes: 1 });
        expect(await em.count(WebhookDelivery, { endpoint: endpoint.id })).to.equal(1); // seen inside the transaction
        throw new Error('the change fails after the event was recorded');
      })
      .catch((error: unknown) => error);
    expect(failed).to.be.instanceOf(Error);
    await grantMinutes(app, user, 'committed');
    const [got] = await target.waitFor(1);
    expect(JSON.parse(got!.body).data).to.include({ balance: 1 });
    await app.services.features.webhookDelivery.idle();
    expect(target.received).to.have.length(1);
    expect(await deliveriesOf(app, endpoint.id)).to.have.length(1);
  });

  it('after a rotation both the new and the old secret verify the same delivery', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    const endpoint = await register(user, target.url());
    const rotated = await json(await user.client.post(`${WEBHOOKS}/${endpoint.id}/rotate-secret`));
    await grantMinutes(app, user, 'rotated');
    const [got] = await target.waitFor(1);
    const headers = got!.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).to.have.length(2);
    expect(new Webhook(rotated.secret).verify(got!.body, headers)).to.have.property('type', 'credits.updated');
    expect(new Webhook(endpoint.secret).verify(got!.body, headers)).to.have.property('type', 'credits.updated');
  });

  it('a 3xx is not followed: the redirect target gets nothing and the attempt fails with the status', async () => {
    const user = await signUpAndLogin(app);
    const elsewhere = await receiver();
    const target = await receiver();
    target.answer = () => ({ status: 302, location: elsewhere.url() });
    const endpoint = await register(user, target.url());
    await grantMinutes(app, user, 'redirected');
    await target.waitFor(1);
    const [delivery] = await eventually(async () => {
      const rows = await deliveriesOf(app, endpoint.id);
      return rows[0]?.attempts === 1 ? rows : undefined;
    }, 'the failed attempt recorded');
    expect(delivery).to.deep.include({ status: 'pending', responseStatus: 302 });
    expect(delivery!.lastError).to.match(/302.*redirects are not followed/);
    expect(elsewhere.received).to.have.length(0);
  });

  it('a receiver that never answers holds one slot only: another endpoint still gets its events promptly, and the slow attempt times out', async () => {
    const [slowUser, fastUser] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app)]);
    const slow = await receiver();
    slow.answer = () => 'hang';
    const fast = await receiver();
    const slowEndpoint = await register(slowUser, slow.url());
    await register(fastUser, fast.url());
    // five events owed to the slow endpoint first: with WEBHOOK_CONCURRENCY=2 they could fill every slot
    for (let i = 0; i < 5; i++) await grantMinutes(app, slowUser, `slow-${i}`);
    await slow.waitFor(1);
    const sent = Date.now();
    await grantMinutes(app, fastUser, 'fast');
    const [got] = await fast.waitFor(1, 1000);
    expect(got!.at - sent).to.be.below(1000);
    expect(slow.received).to.have.length(1); // one at a time per endpoint
    const [first] = await eventually(async () => {
      const rows = await deliveriesOf(app, slowEndpoint.id);
      return rows.find((row) => row.attempts === 1) ? rows.filter((row) => row.attempts === 1) : undefined;
    }, 'the slow attempt timed out', 5000);
    expect(first!.lastError).to.match(/no answer within 1500 ms/);
    expect(first!.latencyMs).to.be.within(1400, 3000);
    expect(first!.responseStatus).to.equal(null);
    // its retries would keep a slot busy for the tests after this one
    expect((await slowUser.client.delete(`${WEBHOOKS}/${slowEndpoint.id}`)).status).to.equal(204);
  });

  it('two api replicas share the outbox: every delivery is sent exactly once when no worker dies', async function () {
    this.timeout(90_000);
    const replica = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_CONCURRENCY: '2' });
    try {
      const users = await Promise.all(Array.from({ length: 3 }, () => signUpAndLogin(app)));
      const targets = await Promise.all(users.map(() => receiver()));
      await Promise.all(users.map((user, i) => register(user, targets[i]!.url())));
      await Promise.all(users.map(async (user) => {
        for (let n = 0; n < 10; n++) await grantMinutes(app, user, `replicas-${n}`);
      }));
      await Promise.all(targets.map((target) => target.waitFor(10, 60_000)));
      await Promise.all([app.services.features.webhookDelivery.idle(), replica.services.features.webhookDelivery.idle()]);
      for (const target of targets) {
        const ids = target.received.map((r) => r.headers['webhook-id']);
        expect(ids).to.have.length(10);
        expect(new Set(ids)).to.have.property('size', 10);
      }
    } finally {
      await replica.close();
    }
  });

  it('workers racing for the same rows (four at once, polling every 10 ms) never send one delivery twice', async function () {
    this.timeout(90_000);
    await app.services.features.webhookDelivery.close();
    const workers = Array.from({ length: 4 }, () => createWebhooks({ ...app.services, config: { ...app.services.config, WEBHOOK_POLL_MS: 10, WEBHOOK_CONCURRENCY: 8 } }).worker);
    try {
      const users = await Promise.all(Array.from({ length: 8 }, () => signUpAndLogin(app)));
      const targets = await Promise.all(users.map(() => receiver()));
      await Promise.all(users.map((user, i) => register(user, targets[i]!.url())));
      for (const worker of workers) worker.start();
      await Promise.all(users.map(async (user) => {
        for (let n = 0; n < 8; n++) await grantMinutes(app, user, `race-${n}`);
      }));
      await Promise.all(targets.map((target) => target.waitFor(8, 60_000)));
      await Promise.all(workers.map((worker) => worker.idle()));
      const duplicates = targets.flatMap((target) => target.received.map((r) => r.headers['webhook-id'])).filter((id, index, all) => all.indexOf(id) !== index);
      expect(duplicates).to.deep.equal([]);
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      app.services.features.webhookDelivery = createWebhooks(app.services).worker;
      app.services.features.webhookDelivery.start();
    }
  });

  it('a name that resolves to loopback at delivery time (DNS rebinding) is refused when private targets are not allowed', async () => {
    const target = await receiver();
    const publicName = 'rebind.test';
    const table = new Map([[publicName, '93.184.215.14']]);
    const strict = await startTestApp({ WEBHOOK_POLL_MS: '100' }, { webhookResolver: tableResolver(table) });
    // the permissive app must not send the strict app's deliveries meanwhile: stop its worker
    await app.services.features.webhookDelivery.close();
    try {
      const user = await signUpAndLogin(strict);
      const endpoint = await register(user, `http://${publicName}:${target.port}/hooks`);
      table.set(publicName, '127.0.0.1');
      await grantMinutes(strict, user, 'rebound');
      const [delivery] = await eventually(async () => {
        const rows = await deliveriesOf(strict, endpoint.id);
        return rows[0]?.attempts === 1 ? rows : undefined;
      }, 'the refused attempt recorded');
      expect(delivery!.lastError).to.match(/rebind\.test resolves to 127\.0\.0\.1, which is loopback/);
      expect(target.received).to.have.length(0);
      // the control: the same row, sent by a worker that allows private targets, reaches the receiver
      const permissive = createWebhooks({ ...strict.services, config: { ...strict.services.config, WEBHOOK_ALLOW_PRIVATE_TARGETS: true } }, tableResolver(table));
      await strict.services.features.webhookDelivery.close();
      await user.client.post(`${WEBHOOKS}/${endpoint.id}/deliveries/${delivery!.id}/redeliver`);
      permissive.worker.start();
      await target.waitFor(1);
      await permissive.worker.close();
    } finally {
      await strict.close();
    }
  });
});

describe('webhook delivery: fair among users, bounded by the status (issue 41 M2, L2)', () => {
  const TIMEOUT_MS = 1500;
  let app: TestApp;
  const receivers = suiteReceivers();
  const receiver = () => receivers.start();

  before(async () => {
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_CONCURRENCY: '8' });
  });
  after(async () => {
    await app.close();
    await receivers.closeAll();
  });

  it('attack: one user\'s 8 slow endpoints with 40 deliveries queued delay another user\'s delivery by at most one timeout', async function () {
    this.timeout(60_000);
    const [flooder, other] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app)]);
    // answers just inside the timeout: never failing, so never disabled
    const slow = await receiver();
    slow.answer = () => ({ status: 200, delayMs: TIMEOUT_MS - 300 });
    for (let i = 0; i < 8; i++) await register(flooder, slow.url());
    for (let i = 0; i < 5; i++) await grantMinutes(app, flooder, `flood-${i}`);
    await slow.waitFor(8);
    const fast = await receiver();
    await register(other, fast.url());
    const sent = Date.now();
    await grantMinutes(app, other, 'waiting-behind-the-flood');
    const [got] = await fast.waitFor(1, 20_000);
    const delay = got!.at - sent;
    // one timeout for a slot to free, a poll and some slack; before, it waited for the whole queue (about 5 × 1.2 s)
    expect(delay, `delivered after ${delay} ms`).to.be.below(TIMEOUT_MS + 700);
    expect(slow.received.length, 'the flooder\'s queue was not yet drained').to.be.below(40);
    await slow.waitFor(40, 30_000);
  });

  it('attack: a receiver answering 200 with an endless body: the attempt succeeds on the status and the body is not read', async function () {
    this.timeout(30_000);
    const user = await signUpAndLogin(app);
    const target = await receiver();
    target.answer = () => ({ status: 200, endlessBody: true });
    const endpoint = await register(user, target.url());
    await grantMinutes(app, user, 'endless-body');
    const [delivery] = await eventually(async () => {
      const rows = await deliveriesOf(app, endpoint.id);
      return rows[0]?.attempts === 1 ? rows : undefined;
    }, 'the attempt recorded');
    expect(delivery).to.deep.include({ status: 'succeeded', responseStatus: 200, lastError: null });
    expect(delivery!.latencyMs).to.be.below(TIMEOUT_MS);
    await eventually(async () => (target.bodiesClosed === 1 ? true : undefined), 'the worker closed the response');
    // what the sockets' buffers took before the close, not the body: a few MiB at most
    expect(target.bodyBytesSent, `${target.bodyBytesSent} bytes sent`).to.be.below(16 * 1024 * 1024);
  });
});

describe('webhook delivery (driven clock)', () => {
  let app: TestApp;
  let sink: SmtpSink;
  const clock = new ManualClock();
  const receivers = suiteReceivers();
  const receiver = () => receivers.start();
  const worker = () => app.services.features.webhookDelivery;
  /** Lets the worker look for due deliveries at the clock's time and finish what it started. */
  const pass = async () => {
    worker().kick();
    await worker().idle();
  };

  before(async () => {
    sink = await SmtpSink.start();
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', SMTP_URL: sink.url }, { clock });
  });
  after(async () => {
    await app.close();
    await sink.close();
    await receivers.closeAll();
  });

  it('a 500 is retried on the schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, each ±10%), then the delivery is failed', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    target.answer = () => ({ status: 500 });
    const endpoint = await register(user, target.url());
    await grantMinutes(app, user, 'always-500');
    await target.waitFor(1);
    await pass();
    for (const [step, delay] of RETRY_SCHEDULE_MS.entries()) {
      const [row] = await deliveriesOf(app, endpoint.id);
      expect(row).to.deep.include({ status: 'pending', attempts: step + 1, responseStatus: 500 });
      const wait = row!.nextAttemptAt!.getTime() - row!.lastAttemptAt!.getTime();
      expect(wait, `wait after attempt ${step + 1}`).to.be.within(delay * 0.9, delay * 1.1);
      // not before it is due
      clock.advance(wait - 1000);
      await pass();
      expect(target.received).to.have.length(step + 1);
      clock.advance(1000);
      await pass();
      expect(target.received).to.have.length(step + 2);
    }
    const [row] = await deliveriesOf(app, endpoint.id);
    expect(row).to.deep.include({ status: 'failed', attempts: RETRY_SCHEDULE_MS.length + 1, nextAttemptAt: null, responseStatus: 500 });
    // every attempt carried the same webhook-id
    expect(new Set(target.received.map((r) => r.headers['webhook-id']))).to.have.property('size', 1);
  });

  it('a 500 then a 200: the retry after its backoff succeeds; the log shows status, response code, latency, attempts, next attempt and last error', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    target.answer = (_request, index) => ({ status: index === 0 ? 500 : 204 });
    const endpoint = await register(user, target.url());
    await grantMinutes(app, user, 'then-200');
    await target.waitFor(1);
    await pass();
    const log = await json(await user.client.get(`${WEBHOOKS}/${endpoint.id}/deliveries`));
    expect(log).to.deep.include({ total_count: 1, has_more: false, page: 1 });
    const [entry] = log.data;
    expect(entry).to.deep.include({ event_type: 'credits.updated', status: 'pending', attempts: 1, response_status: 500, last_error: 'the receiver answered 500' });
    expect(entry.latency_ms).to.be.a('number').and.at.least(0);
    expect(new Date(entry.next_attempt_at).getTime() - clock.now().getTime()).to.be.within(4500, 5500);
    expect(entry.payload).to.deep.include({ type: 'credits.updated' });
    clock.advance(5600);
    await pass();
    expect(target.received).to.have.length(2);
    const [after] = (await json(await user.client.get(`${WEBHOOKS}/${endpoint.id}/deliveries`))).data;
    expect(after).to.deep.include({ status: 'succeeded', attempts: 2, response_status: 204, last_error: null, next_attempt_at: null });
  });

  it('redeliver sends a delivery again with the same webhook-id; 404 for an unknown one, 409 while the endpoint is disabled', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    const endpoint = await register(user, target.url());
    await grantMinutes(app, user, 'redeliver');
    await target.waitFor(1);
    await pass();
    const [delivery] = await deliveriesOf(app, endpoint.id);
    expect(delivery!.status).to.equal('succeeded');
    const path = `${WEBHOOKS}/${endpoint.id}/deliveries/${delivery!.id}/redeliver`;
    const response = await user.client.post(path);
    expect(response.status).to.equal(202);
    expect(await json(response)).to.deep.include({ id: delivery!.id, status: 'pending' });
    await target.waitFor(2);
    expect(target.received[1]!.headers['webhook-id']).to.equal(target.received[0]!.headers['webhook-id']);
    await pass();
    expect((await deliveriesOf(app, endpoint.id))[0]).to.deep.include({ status: 'succeeded', attempts: 2 });
    expect((await user.client.post(`${WEBHOOKS}/${endpoint.id}/deliveries/${crypto.randomUUID()}/redeliver`)).status).to.equal(404);
    await user.client.patch(`${WEBHOOKS}/${endpoint.id}`, { enabled: false });
    const refused = await user.client.post(path);
    expect(refused.status).to.equal(409);
    expect(await json(refused)).to.include({ code: 'WebhookEndpointDisabled' });
  });

  it('at least once across a crash: a delivery claimed by a worker that dies mid-request is sent again, same webhook-id, once its lease runs out', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    target.answer = (_request, index) => (index === 0 ? 'hang' : { status: 200 });
    const endpoint = await register(user, target.url());
    await grantMinutes(app, user, 'crash');
    await target.waitFor(1);
    // the worker dies holding the claim: nothing about the attempt is written
    await worker().close();
    const [claimed] = await deliveriesOf(app, endpoint.id);
    expect(claimed).to.deep.include({ status: 'pending', attempts: 0 });
    expect(claimed!.leaseUntil!.getTime()).to.be.above(clock.now().getTime());
    const successor = createWebhooks(app.services).worker;
    try {
      successor.kick();
      await successor.idle();
      expect(target.received).to.have.length(1); // still leased
      clock.advance(claimed!.leaseUntil!.getTime() - clock.now().getTime() + 1);
      successor.kick();
      await successor.idle();
      expect(target.received).to.have.length(2);
      expect(target.received[1]!.headers['webhook-id']).to.equal(target.received[0]!.headers['webhook-id']);
      expect((await deliveriesOf(app, endpoint.id))[0]).to.deep.include({ status: 'succeeded', attempts: 1, responseStatus: 200 });
    } finally {
      await successor.close();
      // the app's own worker back for the next tests
      app.services.features.webhookDelivery = createWebhooks(app.services).worker;
      app.services.features.webhookDelivery.start();
    }
  });

  it('an endpoint failing for WEBHOOK_DISABLE_AFTER_DAYS (5) is disabled and its owner told by e-mail; before that it stays enabled', async () => {
    const user = await signUpAndLogin(app);
    const target = await receiver();
    target.answer = () => ({ status: 503 });
    const endpoint = await register(user, target.url());
    const em = app.services.orm.em.fork();
    await grantMinutes(app, user, 'down-1');
    await target.waitFor(1);
    await pass();
    const failingSince = (await em.findOneOrFail(WebhookEndpoint, endpoint.id, { refresh: true })).failingSince!;
    expect(failingSince.getTime()).to.equal(clock.now().getTime());
    clock.advance(4 * 86_400_000);
    await grantMinutes(app, user, 'down-2');
    await pass();
    expect(await em.findOneOrFail(WebhookEndpoint, endpoint.id, { refresh: true })).to.deep.include({ enabled: true, disabledReason: null });
    const mailsBefore = sink.messages.length;
    clock.advance(86_400_000 + 60_000);
    await grantMinutes(app, user, 'down-3');
    await pass();
    expect(await em.findOneOrFail(WebhookEndpoint, endpoint.id, { refresh: true })).to.deep.include({ enabled: false, disabledReason: 'failing' });
    const mail = await sink.waitFor({ to: user.user.email, subject: /disabled/, since: mailsBefore });
    expect(mail.subject).to.equal('Your Cutroom webhook endpoint was disabled');
    expect(mail.text).to.include(target.url()).and.include('5 days').and.include('503');
    // a disabled endpoint gets nothing more: no new event is recorded for it, no pending one is sent
    const sent = target.received.length;
    const recorded = (await deliveriesOf(app, endpoint.id)).length;
    await grantMinutes(app, user, 'down-4');
    clock.advance(86_400_000);
    await pass();
    expect(target.received).to.have.length(sent);
    expect(await deliveriesOf(app, endpoint.id)).to.have.length(recorded);
  });
});
