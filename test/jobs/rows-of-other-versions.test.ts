// Job rows and results this version must settle though it did not expect them: a program it
// does not know, a subject kept where a version before `jobs.subject_id` kept it (an older
// api writing during a rolling upgrade), a result naming an object that cannot be read.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createAccount } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { resolveSettings } from '../../api/src/exports/service.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { storedUpload } from '../support/stored-upload.ts';
import { putArtifactResult } from '../operator/operator-support.ts';

describe('job rows another version wrote, and results that cannot be read', function () {
  this.timeout(60_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_DISPATCH_POLL_MS: '200' });
  });
  after(async () => app?.close());

  /** A queued local row as another version would have written it, older than any other. */
  async function insertRow(fields: { kind: string; program: string; userId: string; input?: object; projectId?: string }): Promise<string> {
    const id = randomUUID();
    await app.services.orm.em.fork().getConnection().execute(
      `insert into jobs (id, kind, program, user_id, project_id, input, output_prefix, status, backend, timeout_seconds, created_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, 'queued', 'local', 600, now() - interval '1 hour')`,
      [id, fields.kind, fields.program, fields.userId, fields.projectId ?? null, JSON.stringify(fields.input ?? {}), `jobs/${fields.program}/${id}`],
    );
    return id;
  }
  const row = (id: string) => app.services.orm.em.fork().findOneOrFail(Job, id, { refresh: true });

  it('a queued job of a program this version does not know ends failed (job.invalid_spec) and does not hold up the queue behind it', async () => {
    const [first, second] = [await createAccount(app), await createAccount(app)];
    const unknown = await insertRow({ kind: 'ArtifactJob', program: 'legacy-program', userId: first.user.id });
    const valid = await app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: second.user.id,
      input: { sourceKey: `media/${randomUUID()}/missing`, contentType: 'video/mp4' },
    });
    const settled = await eventually(async () => ((await row(unknown)).completedAt ? row(unknown) : undefined), 'the unknown program settled', 15_000);
    expect(settled).to.deep.include({ status: 'failed', errorCode: 'job.invalid_spec' });
    // the job behind it runs (its source is missing, so it fails on its own, with the program's code)
    const after = await eventually(async () => ((await row(valid.id)).completedAt ? row(valid.id) : undefined), 'the valid job settled', 30_000);
    expect(after.dispatchedAt, 'dispatched').to.not.equal(null);
    expect(app.logs.filter((line) => String(line.msg).includes('job outbox pass failed'))).to.deep.equal([]);
  });

  it('a render row an older version wrote (export_id in its input, no subject_id) settles its export', async () => {
    const owner = await createAccount(app);
    const exportId = randomUUID();
    const project = await app.services.features.projects.create(app.services.orm.em.fork(), owner.user.id, 'Older version');
    const em = app.services.orm.em.fork();
    em.create(Export, {
      id: exportId,
      project: project.id,
      userId: owner.user.id,
      name: 'old',
      exportSettings: resolveSettings({}, null),
      status: 'rendering',
      expiresAt: new Date(Date.now() + 86_400_000),
      watermarkRequired: false,
      filename: 'old.mp4',
    });
    await em.flush();
    const id = await insertRow({ kind: 'RenderJob', program: 'render', userId: owner.user.id, projectId: project.id, input: { export_id: exportId } });
    await app.services.orm.em.fork().getConnection().execute(`update jobs set dispatched_at = now() where id = ?`, [id]);
    expect(await app.services.completion.complete(id, { ok: false, error: 'The job did not finish within its time limit of 600 s.', code: 'job.timed_out', params: { seconds: 600 } })).to.equal(true);
    const settled = await app.services.orm.em.fork().findOneOrFail(Export, exportId);
    expect(settled).to.deep.include({ status: 'failed', errorCode: 'job.timed_out' });
  });

  it("an artifact result naming a waveform that cannot be read ends the job failed (job.invalid_result) and the file FAILED, instead of a completion retried for ever", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cutroom-unreadable-'));
    try {
      await writeFile(join(dir, 'clip.mp4'), randomBytes(1024));
      const upload = await storedUpload(app.services, join(dir, 'clip.mp4'), 'video/mp4');
      const job = await app.services.jobs.submit(app.services.orm.em.fork(), {
        program: 'artifact',
        userId: upload.userId,
        mediaFileId: upload.file.id,
        // never dispatched: this test plays the program's part
        waitsForFileId: randomUUID(),
        input: { sourceKey: upload.key, contentType: 'video/mp4' },
      });
      const result = await putArtifactResult(app.services.storage, job.outputPrefix);
      const named = { ...result, artifacts: { ...result.artifacts, waveform_key: `${job.outputPrefix}/waveform.json` } };
      expect(await app.services.completion.complete(job.id, { ok: true, result: named })).to.equal(true);
      expect(await row(job.id)).to.deep.include({ status: 'failed', errorCode: 'job.invalid_result' });
      expect((await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id)).status).to.equal('FAILED');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
