import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { recoverUnfinishedJobs } from '../../api/src/app.ts';
import { eventually } from '../support/wait.ts';
import { storedUpload } from '../support/stored-upload.ts';
import { makeVideo } from '../support/media.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import type { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';

// Recovery dispatches oldest first; rows dated long ago go ahead of any other test's leftovers.
const longAgo = (seconds: number) => new Date(Date.UTC(2000, 0, 1, 0, 0, seconds));

async function insertUnfinishedJob(app: TestApp, row: Partial<JobRow> & { userId: string; input: Record<string, unknown> }): Promise<string> {
  const em = app.services.orm.em.fork();
  const id = randomUUID();
  em.create(Job, {
    kind: 'ArtifactJob',
    program: 'artifact',
    outputPrefix: `jobs/artifact/${id}`,
    status: 'queued',
    ...row,
    id,
  });
  await em.flush();
  return id;
}

describe('job system: local backend recovery at start-up', function () {
  this.timeout(90_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-job-recovery-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an unfinished job left by a crashed api runs again at start-up and its file becomes UPLOADED', async () => {
    const setup = await startTestApp({ JOB_BACKEND: 'local' });
    let upload: Awaited<ReturnType<typeof storedUpload>>;
    let jobId: string;
    try {
      upload = await storedUpload(setup.services, await makeVideo(dir, 'crashed.mp4', { seconds: 1 }), 'video/mp4');
      // As a crash mid-run leaves it: running, some progress, never completed.
      jobId = await insertUnfinishedJob(setup, {
        userId: upload.userId,
        mediaFileId: upload.file.id,
        input: { sourceKey: upload.key, contentType: 'video/mp4' },
        status: 'running',
        progress: 40,
        startedAt: longAgo(1),
        createdAt: longAgo(0),
      });
    } finally {
      await setup.close();
    }

    const app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' });
    try {
      await recoverUnfinishedJobs(app.services); // what api/src/main.ts does at start-up
      const job = await eventually(async () => {
        const row = await app.services.orm.em.fork().findOneOrFail(Job, jobId);
        return row.completedAt ? row : undefined;
      }, 'the recovered job settled', 60_000);
      expect([job.status, job.error, job.progress]).to.deep.equal(['succeeded', null, 100]);
      const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
      expect(file.status).to.equal('UPLOADED');
      expect(file.thumbnailKey).to.equal(`jobs/artifact/${jobId}/thumbnail.jpg`);
    } finally {
      await app.close();
    }
  });

  it('recovery is bounded by the queue limit: jobs beyond it end failed as "could not be started"', async () => {
    const setup = await startTestApp({ JOB_BACKEND: 'local' });
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        ids.push(await insertUnfinishedJob(setup, { userId: randomUUID(), input: { sourceKey: `missing-${i}`, contentType: 'video/mp4' }, createdAt: longAgo(i) }));
      }
    } finally {
      await setup.close();
    }

    const app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '1', JOB_LOCAL_QUEUE_LIMIT: '1' });
    try {
      await recoverUnfinishedJobs(app.services);
      await (app.services.dispatcher as LocalJobRunner).idle();
      const em = app.services.orm.em.fork();
      const rows = await Promise.all(ids.map((id) => em.findOneOrFail(Job, id)));
      expect(rows.every((row) => row.status === 'failed' && row.completedAt)).to.equal(true);
      // The oldest runs, the next waits in the queue, the third is refused.
      expect(rows.map((row) => row.error === 'The job could not be started; try again later.')).to.deep.equal([false, false, true]);
    } finally {
      await app.close();
    }
  });
});
