import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type Client } from '../support/users.ts';
import { dataOf, expectKeepalives, isEvent, openSse } from '../support/sse-stream.ts';
import { makeCorruptFile, makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { runArtifactJob, storeItem } from '../media/library-fixtures.ts';
import { eventually } from '../support/wait.ts';

/** An open SSE response read frame by frame (comments included). */
const openStream = (client: Client) => openSse(client, '/api/v1/user-stream');

describe('user stream: GET /api/v1/user-stream', () => {
  let app: TestApp;
  let dir: string;

  before(async () => {
    app = await startTestApp({ SSE_KEEPALIVE_SECONDS: '1', SSE_MAX_CONNECTIONS_PER_USER: '2' });
    dir = await mkdtemp(join(tmpdir(), 'cutroom-user-stream-'));
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function subscribers(userId: string): Promise<number> {
    const reply = (await app.services.redis.pubsub('NUMSUB', app.services.bus.userChannel(userId))) as [string, number];
    return Number(reply[1]);
  }

  it('SSE headers: text/event-stream, Cache-Control no-cache, Connection keep-alive, X-Accel-Buffering no', async () => {
    const { client } = await signUpAndLogin(app);
    const stream = await openStream(client);
    try {
      expect(stream.response.status).to.equal(200);
      expect(stream.response.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(stream.response.headers.get('cache-control')).to.equal('no-cache');
      expect(stream.response.headers.get('connection')).to.equal('keep-alive');
      expect(stream.response.headers.get('x-accel-buffering')).to.equal('no');
      await stream.next((frame) => frame === ': connected');
    } finally {
      stream.close();
    }
  });

  it('without an active session → 401', async () => {
    const response = await app.fetch('/api/v1/user-stream');
    expect(response.status).to.equal(401);
    expect(await response.json()).to.have.property('detail');
  });

  it('media_ready reaches the stream when a real file is uploaded through the presigned URL, confirmed and processed (end to end)', async () => {
    const { client } = await signUpAndLogin(app);
    const stream = await openStream(client);
    try {
      await stream.next((frame) => frame === ': connected');
      const clip = await makeVideo(dir, 'ready.mp4', { seconds: 1 });
      const uploaded = await uploadMedia(client, clip, { contentType: 'video/mp4', displayName: 'Ready clip' });
      const frame = await stream.next(isEvent('media_ready'));
      expect(dataOf(frame)).to.deep.include({
        media_file_uuid: uploaded.mediaFileId,
        media_item_uuid: uploaded.mediaItemId,
        display_name: 'Ready clip',
      });
      const view = (await (await client.get(`/api/v1/media/${uploaded.mediaItemId}`)).json()) as { status: string; duration_ms: number };
      expect(view.status).to.equal('uploaded');
      expect(view.duration_ms).to.be.within(900, 1200);
    } finally {
      stream.close();
    }
  });

  it('media_failed reaches the stream when processing fails, with the error', async () => {
    const { user, client } = await signUpAndLogin(app);
    const stream = await openStream(client);
    try {
      await stream.next((frame) => frame === ': connected');
      const stored = await storeItem(app, user.id, await makeCorruptFile(dir, 'broken.mp4'), 'video/mp4', 'Broken');
      await runArtifactJob(app, user.id, stored, 'video/mp4');
      const data = dataOf(await stream.next(isEvent('media_failed')));
      expect(data).to.include({ media_file_uuid: stored.file.id, media_item_uuid: stored.item.id, display_name: 'Broken' });
      expect(data.error).to.be.a('string').that.is.not.empty;
    } finally {
      stream.close();
    }
  });

  it("only the caller's events: another user's media events never reach the stream", async () => {
    const alice = await signUpAndLogin(app);
    const bob = await signUpAndLogin(app);
    const stream = await openStream(alice.client);
    try {
      await stream.next((frame) => frame === ': connected');
      const payload = { media_file_uuid: bob.user.id, media_item_uuid: bob.user.id, display_name: null, proxy_status: 'ready' };
      await app.services.bus.publishToUser(bob.user.id, { type: 'media_ready', data: payload });
      await app.services.bus.publishToUser(alice.user.id, { type: 'media_ready', data: { ...payload, display_name: 'mine' } });
      const { frame, before } = await stream.until(isEvent('media_ready'));
      expect(dataOf(frame).display_name, 'the first media_ready is alice\'s own').to.equal('mine');
      expect(before.filter(isEvent('media_ready'))).to.deep.equal([]);
    } finally {
      stream.close();
    }
  });

  it('the stream ends with its session: after logout-all it is closed at the next keepalive', async () => {
    const { client } = await signUpAndLogin(app);
    const stream = await openStream(client);
    try {
      await stream.next((frame) => frame === ': connected');
      expect((await client.post('/api/v1/auth/logout-all')).status).to.equal(200);
      const started = Date.now();
      await stream.ended(2500);
      expect(Date.now() - started).to.be.below(2500);
    } finally {
      stream.close();
    }
  });

  it('keepalive: a comment every SSE_KEEPALIVE_SECONDS', async () => {
    const { client } = await signUpAndLogin(app);
    const stream = await openStream(client);
    try {
      await expectKeepalives(stream, 1);
    } finally {
      stream.close();
    }
  });

  it('connection cap: over SSE_MAX_CONNECTIONS_PER_USER → 429; closing one frees a place', async () => {
    const { client } = await signUpAndLogin(app);
    const first = await openStream(client);
    const second = await openStream(client);
    try {
      expect([first.response.status, second.response.status]).to.deep.equal([200, 200]);
      const third = await client.get('/api/v1/user-stream');
      expect(third.status).to.equal(429);
      expect(third.headers.get('retry-after')).to.match(/^\d+$/);
      expect(((await third.json()) as { detail: string }).detail).to.contain('2');
      // Another user is counted apart.
      const other = await openStream((await signUpAndLogin(app)).client);
      expect(other.response.status).to.equal(200);
      other.close();
      first.close();
      const again = await eventually(async () => {
        const answer = await client.get('/api/v1/user-stream');
        return answer.status === 429 ? undefined : answer;
      }, 'a stream admitted once the first closed', 2000, 100);
      expect(again.status).to.equal(200);
      await again.body?.cancel();
    } finally {
      first.close();
      second.close();
    }
  });

  it('cleanup on disconnect: the channel stays subscribed while a stream of the user is open and is unsubscribed after the last one leaves', async () => {
    const { user, client } = await signUpAndLogin(app);
    const one = await openStream(client);
    const two = await openStream(client);
    await one.next((frame) => frame === ': connected');
    await two.next((frame) => frame === ': connected');
    expect(await subscribers(user.id)).to.equal(1); // one shared subscriber connection per process
    one.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await subscribers(user.id)).to.equal(1);
    two.close();
    await eventually(async () => ((await subscribers(user.id)) === 0 ? true : undefined), 'the channel unsubscribed after the last stream', 3000, 50);
    expect(await subscribers(user.id)).to.equal(0);
    // The lease is released too: two fresh streams are admitted at once.
    const again = [await openStream(client), await openStream(client)];
    expect(again.map((stream) => stream.response.status)).to.deep.equal([200, 200]);
    for (const stream of again) stream.close();
  });
});
