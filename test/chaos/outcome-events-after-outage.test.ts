import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Job } from '../../api/src/jobs/entities.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { listenToUser } from '../support/events.ts';
import { makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { signUpAndLogin } from '../support/users.ts';
import { eventually } from '../support/wait.ts';

/**
 * Found by the chaos campaign's reasoning about its event check: a settlement commits, then
 * publishes its outcome event; a Redis outage at that moment made the publish fail after the
 * commit, and nothing ever published it again (the file UPLOADED, its owner never told).
 */
describe('outcome events and a Redis outage at settlement', function () {
  this.timeout(120_000);
  let app: TestApp;
  let redis: TcpProxy;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-outcome-outage-'));
    const target = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
    redis = await startTcpProxy(target.hostname, Number(target.port || 6379));
    app = await startTestApp({ JOB_BACKEND: 'local', REDIS_URL: `redis://127.0.0.1:${redis.port}${target.pathname}` });
  });
  after(async () => {
    redis?.restore();
    await app?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('media_ready whose publish met a Redis outage after the commit is published once Redis answers again, exactly once', async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const events = await listenToUser(app.services.bus, owner.user.id);
    try {
      const uploaded = await uploadMedia(owner.client, await makeVideo(dir, 'outage.mp4', { seconds: 1, width: 160, height: 90 }), { contentType: 'video/mp4' });
      const job = await eventually(async () => {
        const row = await app.services.orm.em.fork().findOne(Job, { mediaFileId: uploaded.mediaFileId, program: 'artifact' });
        return row?.status === 'running' ? row : undefined;
      }, 'the artifact job running', 60_000);
      redis.cut();
      await eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Job, job.id, { refresh: true })).completedAt ? true : undefined), 'the job settled', 60_000);
      // the publish after the commit has met the outage by now (ioredis gives up after a couple of reconnects)
      await new Promise((resolve) => setTimeout(resolve, 1500));
      redis.restore();
      const ready = await events.next('media_ready', 20_000);
      expect(ready.data.media_item_uuid).to.equal(uploaded.mediaItemId);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
    } finally {
      await events.close();
    }
  });
});
