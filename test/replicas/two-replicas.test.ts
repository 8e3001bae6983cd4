import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { Client, createAccount, uniqueUsername } from '../support/users.ts';
import { dataOf, isEvent, openSse, type SseStream } from '../support/sse-stream.ts';
import { newSignup, randomIp } from '../accounts/fixtures.ts';
import { StreamConnections, streamLeaseMs } from '../../api/src/events/stream-connections.ts';
import { eventually } from '../support/wait.ts';

/**
 * Two api instances on one PostgreSQL database and one Redis key prefix, as two replicas
 * behind an ingress: every limit the spec sets holds for the pair as it does for one
 * (decisions: "Rate limits", "Login lockout", "User stream"), and an event published by
 * one reaches a stream held by the other.
 */
describe('two api replicas on one PostgreSQL and one Redis', function () {
  this.timeout(60_000);
  let a: TestApp;
  let b: TestApp;

  before(async () => {
    const env = {
      TRUST_PROXY: 'true',
      // Shared by both, apart from every other suite of the run (the run's teardown removes it with the rest).
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cutroom-test:'}replicas-${randomBytes(3).toString('hex')}:`,
      SSE_MAX_CONNECTIONS_PER_USER: '2',
      SSE_KEEPALIVE_SECONDS: '1',
    };
    [a, b] = await Promise.all([startTestApp(env), startTestApp(env)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** One browser (its IP and cookies) whose requests the ingress spreads over both replicas. */
  function browser(ip = randomIp()): { on: (app: TestApp) => Client; cookies: Map<string, string> } {
    const cookies = new Map<string, string>();
    return {
      cookies,
      on: (app) => {
        const client = new Client(app, { ip });
        // The same jar: a session made on one replica is used on the other.
        (client as { cookies: Map<string, string> }).cookies = cookies;
        return client;
      },
    };
  }

  /** A verified user logged in through replica A, with a browser that can reach both. */
  async function loggedIn() {
    const account = await createAccount(a);
    const user = browser();
    const response = await user.on(a).logIn(account.username, account.password);
    expect(response.status).to.equal(200);
    return { account, user };
  }

  async function statusesAlternating(count: number, send: (client: Client) => Promise<Response>, clients: [Client, Client]): Promise<number[]> {
    const statuses: number[] = [];
    for (let n = 0; n < count; n++) statuses.push((await send(clients[n % 2]!)).status);
    return statuses;
  }

  it('signup: 5 per IP per 10 minutes, counted over both replicas', async () => {
    const user = browser();
    const statuses = await statusesAlternating(6, (client) => client.post('/api/v1/users/', newSignup()), [user.on(a), user.on(b)]);
    expect(statuses).to.deep.equal([201, 201, 201, 201, 201, 429]);
    expect((await user.on(a).post('/api/v1/users/', newSignup())).status, 'the first replica refuses too').to.equal(429);
  });

  it('verification and reset e-mails: 3 per IP per 5 minutes, counted over both replicas and both routes', async () => {
    const user = browser();
    const [onA, onB] = [user.on(a), user.on(b)];
    const statuses = [
      (await onA.post('/api/v1/auth/send-verification', { email: 'someone@example.test' })).status,
      (await onB.post('/api/v1/auth/forgot-password', { email: 'someone@example.test' })).status,
      (await onA.post('/api/v1/auth/forgot-password', { email: 'someone@example.test' })).status,
      (await onB.post('/api/v1/auth/send-verification', { email: 'someone@example.test' })).status,
    ];
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
  });

  it('change-password: 5 per 300 seconds per user, counted over both replicas', async () => {
    const { user } = await loggedIn();
    const attempt = (client: Client) => client.post('/api/v1/auth/change-password', { current_password: 'wrong guess', new_password: 'whatever password' });
    const statuses = await statusesAlternating(6, attempt, [user.on(a), user.on(b)]);
    expect(statuses).to.deep.equal([400, 400, 400, 400, 400, 429]);
  });

  it('request-email-change: 3 per 300 seconds per user, counted over both replicas', async () => {
    const { account, user } = await loggedIn();
    const request = (client: Client) => client.post('/api/v1/auth/request-email-change', { new_email: `${uniqueUsername('new')}@example.test`, password: account.password });
    const statuses = await statusesAlternating(4, request, [user.on(a), user.on(b)]);
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
  });

  it('login lockout: failures on one replica lock the account and the IP on the other', async () => {
    const account = await createAccount(a);
    const attacker = browser();
    // LOGIN_MAX_ATTEMPTS (5) failures are 401; the one over the limit is already 429.
    const statuses = [];
    for (let n = 0; n < 6; n++) statuses.push((await attacker.on(a).logIn(account.username, 'wrong password')).status);
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429]);

    const owner = browser().on(b);
    const locked = await owner.logIn(account.username, account.password);
    expect(locked.status, 'the right password from another address, on the other replica').to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.greaterThan(0);

    const other = await createAccount(a);
    const sameIp = await attacker.on(b).logIn(other.username, other.password);
    expect(sameIp.status, "another account from the locked IP, on the other replica").to.equal(429);
  });

  describe('event streams', () => {
    const streams: SseStream[] = [];
    afterEach(() => {
      for (const stream of streams.splice(0)) stream.close();
    });

    async function open(client: Client, path: string): Promise<SseStream> {
      const stream = await openSse(client, path);
      streams.push(stream);
      return stream;
    }

    it('the per-user stream cap (SSE_MAX_CONNECTIONS_PER_USER) counts the streams on both replicas; closing one frees a place on the other', async () => {
      const { user } = await loggedIn();
      const onA = await open(user.on(a), '/api/v1/user-stream');
      const onB = await open(user.on(b), '/api/v1/user-stream');
      expect([onA.response.status, onB.response.status]).to.deep.equal([200, 200]);
      for (const app of [a, b]) {
        const third = await user.on(app).get('/api/v1/user-stream');
        expect(third.status, `a third stream on ${app === a ? 'A' : 'B'}`).to.equal(429);
        expect(third.headers.get('retry-after')).to.match(/^\d+$/);
      }
      onA.close();
      const again = await eventually(async () => {
        const answer = await user.on(b).get('/api/v1/user-stream');
        return answer.status === 429 ? undefined : answer;
      }, 'a stream on B admitted once the one on A closed', 3000, 100);
      expect(again.status).to.equal(200);
      await again.body?.cancel();
    });

    it('a replica that vanished stops counting against the cap once its leases run out, while open streams keep theirs by their keepalives', async function () {
      const leaseMs = streamLeaseMs(1);
      this.timeout(leaseMs + 20_000);
      const { account, user } = await loggedIn();
      // What a crashed replica leaves behind: a lease nobody renews or releases.
      const crashed = new StreamConnections(a.services.redis, leaseMs);
      expect(await crashed.admit(account.user.id, 'user', 2, 'stream-of-a-crashed-replica')).to.not.equal(null);
      const live = await open(user.on(b), '/api/v1/user-stream');
      expect(live.response.status).to.equal(200);
      expect((await user.on(a).get('/api/v1/user-stream')).status, 'the crashed lease still counts').to.equal(429);
      await new Promise((resolve) => setTimeout(resolve, leaseMs + 1000));
      const second = await open(user.on(a), '/api/v1/user-stream');
      expect(second.response.status, 'the crashed lease expired').to.equal(200);
      expect((await user.on(a).get('/api/v1/user-stream')).status, 'the live stream, older than a lease, still counts').to.equal(429);
    });

    it("an event published by replica A reaches the user's stream held by replica B", async () => {
      const { account, user } = await loggedIn();
      const stream = await open(user.on(b), '/api/v1/user-stream');
      await stream.next((frame) => frame === ': connected');
      const data = { media_file_uuid: account.user.id, media_item_uuid: account.user.id, display_name: 'from A', proxy_status: 'ready' };
      await a.services.bus.publishToUser(account.user.id, { type: 'media_ready', data });
      expect(dataOf(await stream.next(isEvent('media_ready'), 5000))).to.deep.equal(data);
    });

    it("a project event published by replica A reaches the project's stream held by replica B", async () => {
      const { user } = await loggedIn();
      const projectId = (await json(await user.on(a).post('/api/v1/projects/', { name: 'Replicated' }))).uuid as string;
      const stream = await open(user.on(b), `/api/v1/projects/${projectId}/events`);
      await stream.next((frame) => frame === ': connected');
      await a.services.bus.publishToProject(projectId, { type: 'analysis_started', data: { project_uuid: projectId, analysis_run_id: projectId } });
      expect(dataOf(await stream.next(isEvent('analysis_started'), 5000))).to.deep.equal({ project_uuid: projectId, analysis_run_id: projectId });
    });
  });

  it('a session made on one replica is live on the other, and a logout on the other ends it on both', async () => {
    const { user } = await loggedIn();
    const cookie = user.cookies.get('session')!;
    expect((await json(await user.on(b).get('/api/v1/auth/check-auth'))).authenticated).to.equal(true);
    expect((await user.on(b).post('/api/v1/auth/logout')).status).to.equal(200);
    const replay = new Client(a);
    replay.cookies.set('session', cookie);
    expect((await json(await replay.get('/api/v1/auth/check-auth'))).authenticated).to.equal(false);
  });
});
