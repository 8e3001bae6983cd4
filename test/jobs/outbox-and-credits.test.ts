import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createAccount } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { storedUpload } from '../support/stored-upload.ts';
import { makeVideo } from '../support/media.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import { jobCreditReference } from '../../api/src/jobs/requests.ts';
import { INPUT_FILE_NAME, outputKey } from '../../crds/contract/outcome.ts';

/** The job's row once it is settled. */
function settled(app: TestApp, jobId: string, timeoutMs = 60_000): Promise<JobRow> {
  return eventually(async () => {
    const row = await app.services.orm.em.fork().findOneOrFail(Job, jobId, { refresh: true });
    return row.completedAt ? row : undefined;
  }, `job ${jobId} settled`, timeoutMs);
}

/** The ledger rows of one job's reservation, by kind. */
async function ledgerOf(app: TestApp, userId: string, jobId: string): Promise<Record<string, number>> {
  const rows = await app.services.orm.em.fork().execute<{ kind: string; minutes: string }[]>(
    `select kind, minutes from credit_entries where user_id = ? and reference = ?`,
    [userId, jobCreditReference(jobId)],
  );
  return Object.fromEntries(rows.map((row) => [row.kind, Number(row.minutes)]));
}

describe('job system: the jobs table is an outbox, and credits travel with the job', function () {
  this.timeout(120_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-outbox-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_DISPATCH_POLL_MS: '200' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A user with `minutes` AI minutes and a stored clip that the artifact program reads. */
  async function userWithClip(minutes: number, name: string) {
    const account = await createAccount(app);
    const em = app.services.orm.em.fork();
    await app.services.billing.grantCredits(em, account.user.id, { minutes, reference: `test:${randomUUID()}` });
    const upload = await storedUpload(app.services, await makeVideo(dir, name, { seconds: 1 }), 'video/mp4', account.user.id);
    return { userId: account.user.id, upload };
  }

  const artifact = (upload: Awaited<ReturnType<typeof storedUpload>>, creditMinutes?: number) => ({
    program: 'artifact' as const,
    userId: upload.userId,
    mediaFileId: upload.file.id,
    input: { sourceKey: upload.key, contentType: 'video/mp4' },
    ...(creditMinutes !== undefined ? { creditMinutes } : {}),
  });

  it('success: the reservation written with the job is deducted exactly once', async () => {
    const { userId, upload } = await userWithClip(5, 'ok.mp4');
    const job = await app.services.jobs.submit(app.services.orm.em.fork(), artifact(upload, 2));
    expect(await ledgerOf(app, userId, job.id)).to.deep.equal({ reserve: 2 });
    const row = await settled(app, job.id);
    expect(row.status).to.equal('succeeded');
    expect(await ledgerOf(app, userId, job.id)).to.deep.equal({ reserve: 2, deduct: 2 });
    expect(await app.services.billing.creditsOf(app.services.orm.em.fork(), userId)).to.include({ balance: 3, reserved: 0 });
  });

  it('failure: the reservation is released, nothing deducted', async () => {
    const { userId } = await userWithClip(5, 'unused.mp4');
    const job = await app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact', userId, input: { sourceKey: `missing/${randomUUID()}`, contentType: 'video/mp4' }, creditMinutes: 3,
    });
    expect((await settled(app, job.id)).status).to.equal('failed');
    expect(await ledgerOf(app, userId, job.id)).to.deep.equal({ reserve: 3, release: 3 });
    expect(await app.services.billing.creditsOf(app.services.orm.em.fork(), userId)).to.include({ balance: 5, reserved: 0 });
  });

  it('too few credits: 402 and neither the job row nor a reservation is written (same transaction)', async () => {
    const { userId, upload } = await userWithClip(1, 'poor.mp4');
    const before = await app.services.orm.em.fork().count(Job, { userId });
    const error = await app.services.jobs.submit(app.services.orm.em.fork(), artifact(upload, 4)).then(() => null, (caught: unknown) => caught);
    expect((error as { kind?: string })?.kind).to.equal('insufficient_credits');
    expect(await app.services.orm.em.fork().count(Job, { userId })).to.equal(before);
    expect(await app.services.billing.creditsOf(app.services.orm.em.fork(), userId)).to.include({ balance: 1, reserved: 0 });
  });

  it('a domain change that rolls back takes its job and reservation with it', async () => {
    const { userId, upload } = await userWithClip(5, 'rollback.mp4');
    let jobId = '';
    await app.services.orm.em.fork().transactional(async (tx) => {
      jobId = (await app.services.jobs.submit(tx, artifact(upload, 2))).id;
      throw new Error('the domain change failed after asking for the job');
    }).catch(() => {});
    expect(await app.services.orm.em.fork().findOne(Job, jobId)).to.equal(null);
    expect(await ledgerOf(app, userId, jobId)).to.deep.equal({});
  });

  it('cancel before dispatch: settled as cancelled here, the reservation released', async () => {
    const { userId, upload } = await userWithClip(5, 'cancel.mp4');
    // Committed but not yet handed over (the outbox of this test app is busy until the transaction ends).
    const em = app.services.orm.em.fork();
    const job = await em.transactional(async (tx) => app.services.jobs.submit(tx, artifact(upload, 1)));
    await app.services.jobs.cancel(app.services.orm.em.fork(), job.id);
    const row = await settled(app, job.id);
    expect([row.status, row.error]).to.deep.equal(['failed', 'The job was cancelled.']);
    expect(await ledgerOf(app, userId, job.id)).to.deep.equal({ reserve: 1, release: 1 });
  });

  it('a duplicate completion report settles nothing a second time', async () => {
    const { userId, upload } = await userWithClip(5, 'twice.mp4');
    const job = await app.services.jobs.submit(app.services.orm.em.fork(), artifact(upload, 2));
    await settled(app, job.id);
    const again = await app.services.completion.complete(job.id, { ok: false, error: 'a late duplicate report', code: 'job.failed' });
    expect(again).to.equal(false);
    expect(await ledgerOf(app, userId, job.id)).to.deep.equal({ reserve: 2, deduct: 2 });
  });

  it('a large input travels by reference: the spec names input.json and the program reads it from S3', async () => {
    const { upload } = await userWithClip(5, 'large-input.mp4');
    const padding = 'x'.repeat(40 * 1024);
    const input = { sourceKey: upload.key, contentType: 'video/mp4', note: padding };
    const job = await app.services.jobs.submit(app.services.orm.em.fork(), { ...artifact(upload), input });
    const row = await settled(app, job.id);
    expect(row.status).to.equal('succeeded');
    const stored = await app.services.storage.readJson<{ note: string }>(outputKey(row.outputPrefix, INPUT_FILE_NAME));
    expect(stored.note).to.have.lengthOf(padding.length);
  });
});

describe('job system: outbox recovery (crash between commit and dispatch, api killed mid-job)', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-outbox-crash-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('a job committed but never handed over (the api died after the commit) is dispatched by the next process, credits settled once', async () => {
    const first = await startTestApp({ JOB_BACKEND: 'local' });
    let jobId: string;
    let userId: string;
    try {
      const account = await createAccount(first);
      userId = account.user.id;
      await first.services.billing.grantCredits(first.services.orm.em.fork(), userId, { minutes: 5, reference: `test:${randomUUID()}` });
      const upload = await storedUpload(first.services, await makeVideo(dir, 'crash.mp4', { seconds: 1 }), 'video/mp4', userId);
      // Stop this process's outbox first: the commit happens, the hand-over never does.
      await first.services.jobs.outbox.close();
      const job = await first.services.jobs.submit(first.services.orm.em.fork(), {
        program: 'artifact', userId, mediaFileId: upload.file.id, input: { sourceKey: upload.key, contentType: 'video/mp4' }, creditMinutes: 2,
      });
      jobId = job.id;
      expect((await first.services.orm.em.fork().findOneOrFail(Job, jobId)).dispatchedAt).to.equal(null);
    } finally {
      await first.close();
    }
    const second = await startTestApp({ JOB_BACKEND: 'local' }, { recoverJobs: true });
    try {
      expect((await settled(second, jobId)).status).to.equal('succeeded');
      expect(await ledgerOf(second, userId, jobId)).to.deep.equal({ reserve: 2, deduct: 2 });
    } finally {
      await second.close();
    }
  });

  it('an api stopped while its local job runs leaves the job unfinished; the restarted api runs it again and settles it once', async () => {
    const first = await startTestApp({ JOB_BACKEND: 'local' });
    let jobId: string;
    let userId: string;
    try {
      const account = await createAccount(first);
      userId = account.user.id;
      await first.services.billing.grantCredits(first.services.orm.em.fork(), userId, { minutes: 5, reference: `test:${randomUUID()}` });
      const upload = await storedUpload(first.services, await makeVideo(dir, 'restart.mp4', { seconds: 3 }), 'video/mp4', userId);
      const job = await first.services.jobs.submit(first.services.orm.em.fork(), {
        program: 'artifact', userId, mediaFileId: upload.file.id, input: { sourceKey: upload.key, contentType: 'video/mp4' }, creditMinutes: 2,
      });
      jobId = job.id;
      await eventually(async () => ((await first.services.orm.em.fork().findOneOrFail(Job, jobId, { refresh: true })).status === 'running' ? true : undefined), 'the job running');
    } finally {
      await first.close(); // the child is stopped; the row stays dispatched and unfinished
    }
    const second = await startTestApp({ JOB_BACKEND: 'local' }, { recoverJobs: true });
    try {
      expect((await settled(second, jobId)).status).to.equal('succeeded');
      expect(await ledgerOf(second, userId, jobId)).to.deep.equal({ reserve: 2, deduct: 2 });
    } finally {
      await second.close();
    }
  });
});
