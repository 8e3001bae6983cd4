import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { benchDatabase } from '../../bench/api/servers.ts';
import { processEnvironment } from '../../bench/chaos/campaign.ts';
import { listenToOutcomes, type OutcomeEventLog } from '../../bench/chaos/outcome-events.ts';
import { apiProcess, type ChaosProcess } from '../../bench/chaos/processes.ts';
import { createChaosUser, uploadThroughApi } from '../../bench/chaos/workload.ts';
import { freePort } from '../support/local-servers.ts';
import { makeVideo } from '../support/media.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { eventually } from '../support/wait.ts';

/**
 * The kill the chaos campaign's event check is about, made to land on purpose: the api
 * (local backend, as api/src/main.ts starts it) settles a job — its commit done — while Redis
 * cannot take the publish, and dies (SIGKILL) before the publish got through. The restarted
 * api must still tell the owner, once.
 */
describe('outcome events and an api killed between a settlement and its publish', function () {
  this.timeout(180_000);
  let database: { url: string; drop(): Promise<void> };
  let redis: TcpProxy;
  let api: ChaosProcess;
  let heard: OutcomeEventLog;
  let dir: string;
  let baseUrl: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-outcome-crash-'));
    database = await benchDatabase(`cutroom_outcome_crash_${randomBytes(4).toString('hex')}`);
    const target = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
    redis = await startTcpProxy(target.hostname, Number(target.port || 6379));
    const prefix = `${process.env.REDIS_KEY_PREFIX}outcome-crash:`;
    heard = await listenToOutcomes(target.toString(), prefix);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env = processEnvironment({
      databaseUrl: database.url,
      redisUrl: `redis://127.0.0.1:${redis.port}${target.pathname}`,
      redisKeyPrefix: prefix,
      s3: { endpoint: process.env.S3_ENDPOINT!, bucket: process.env.S3_BUCKET!, region: process.env.S3_REGION!, accessKeyId: process.env.S3_ACCESS_KEY_ID!, secretAccessKey: process.env.S3_SECRET_ACCESS_KEY! },
      whisperBaseUrl: process.env.WHISPER_BASE_URL!,
      workDir: dir,
    });
    api = apiProcess('api', () => ({ ...env, HOST: '127.0.0.1', PORT: String(port), JOB_BACKEND: 'local' }));
    await api.start();
  });
  after(async () => {
    redis?.restore();
    await api?.stop();
    api?.dispose();
    await heard?.close();
    await redis?.close();
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('media_ready of an upload settled just before the kill is published by the restarted api, exactly once', async () => {
    const owner = await createChaosUser(database.url, baseUrl, 'crash');
    const video = await makeVideo(dir, 'crash.mp4', { seconds: 1, width: 160, height: 90 });
    const uploaded = await uploadThroughApi(owner.client, video, 'video/mp4');
    expect(uploaded.status).to.equal(200);
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const jobState = async () => (await db.query(`select status, completed_at is not null as completed from jobs where media_file_id = $1 and program = 'artifact'`, [uploaded.mediaFileId])).rows[0] as { status: string; completed: boolean } | undefined;
      await eventually(async () => ((await jobState())?.status === 'running' ? true : undefined), 'the artifact job running', 60_000);
      redis.cut();
      await eventually(async () => ((await jobState())?.completed ? true : undefined), 'the job settled', 60_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await api.kill('group');
      redis.restore();
      await api.start();
      const ready = () => heard.events.filter((event) => event.type === 'media_ready' && event.data.media_item_uuid === uploaded.mediaItemId);
      await eventually(async () => (ready().length > 0 ? true : undefined), 'media_ready of the upload', 20_000).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(ready(), 'media_ready events of the upload').to.have.length(1);
    } finally {
      await db.end();
    }
  });
});
