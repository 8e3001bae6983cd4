import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { storedUpload } from '../support/stored-upload.ts';
import { makeVideo } from '../support/media.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';

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
        dispatchedAt: longAgo(0),
      });
    } finally {
      await setup.close();
    }

    // What api/src/main.ts does at start-up with the local backend.
    const app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' }, { recoverJobs: true });
    try {
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

  it('recovery refuses nothing: jobs beyond the free slots wait in the jobs table and all run in turn', async () => {
    const setup = await startTestApp({ JOB_BACKEND: 'local' });
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        ids.push(await insertUnfinishedJob(setup, { userId: randomUUID(), input: { sourceKey: `missing-${i}`, contentType: 'video/mp4' }, createdAt: longAgo(i), dispatchedAt: longAgo(i) }));
      }
    } finally {
      await setup.close();
    }

    const app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '1' }, { recoverJobs: true });
    try {
      const em = () => app.services.orm.em.fork();
      const rows = await eventually(async () => {
        const found = await Promise.all(ids.map((id) => em().findOneOrFail(Job, id)));
        return found.every((row) => row.completedAt) ? found : undefined;
      }, 'the three recovered jobs settled', 60_000);
      // Each ran (its source is missing), none was refused for lack of room.
      expect(rows.every((row) => /does not exist/.test(row.error ?? ''))).to.equal(true);
    } finally {
      await app.close();
    }
  });
});
