import { expect } from 'chai';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { projectWithSources } from '../support/projects.ts';
import { signUpAndLogin } from '../support/users.ts';
import { openSse, isEvent, dataOf } from '../support/sse-stream.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { resourceNamespace } from '../support/kube-cluster.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { MediaFile } from '../../api/src/media/entities.ts';

/**
 * Issue 22 item 5: an analysis whose result cannot be read (a truncated object) is a failure,
 * whatever path reports it: the run is failed, analysis_failed goes out, and the minutes
 * reserved are released, never deducted. The jobs go to a cluster nobody runs (the API
 * simulator), so the test reports the outcome as a backend would.
 */
describe('failure is never charged: analyze → a truncated result object → analysis_failed, balance unchanged', function () {
  this.timeout(60_000);
  let namespace: string;
  let kubeConfig: KubeConfig;
  let app: TestApp;

  before(async () => {
    ({ namespace, kubeConfig } = await resourceNamespace('analysis-charge'));
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace }, { kubeConfig });
  });
  after(async () => {
    await app?.close();
  });

  it('a transcript object cut short: the run is failed, analysis_failed is sent, the reservation released and the billing balance unchanged', async () => {
    const user = await signUpAndLogin(app, { credits: 5 });
    const projectId = await projectWithSources(app, user, [60_000]);
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { uploaderId: user.user.id }, { audioKey: 'audio/placeholder.m4a' });
    const billingBefore = (await json(await user.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    try {
      await stream.next((frame) => frame === ': connected');
      const analyzed = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
      expect(analyzed.status, await analyzed.clone().text()).to.equal(200);
      const started = dataOf(await stream.next(isEvent('analysis_started')));
      const reserved = (await json(await user.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
      expect(reserved.reserved, 'minutes held while it runs').to.be.above(0);

      const job = await app.services.orm.em.fork().findOneOrFail(Job, { subjectId: started.analysis_run_id, program: 'analyze' });
      const edits = `${job.outputPrefix}/edits.json`;
      const transcript = `${job.outputPrefix}/transcript.json`;
      const put = (key: string, body: string) =>
        app.services.storage.client.send(new PutObjectCommand({ Bucket: app.services.storage.bucket, Key: key, Body: body, ContentType: 'application/json' }));
      await put(edits, '[]');
      await put(transcript, '{"text": "hello", "segments": [{"start": 0, "end"');
      await app.services.completion.complete(job.id, {
        ok: true,
        result: { transcript_key: transcript, edits_key: edits, language: 'en', audio_ms: 60_000, counts: { silence: 0, false_start: 0, filler: 0 }, word_count: 1 },
      });

      const failed = dataOf(await stream.next(isEvent('analysis_failed'), 20_000));
      expect(failed).to.include({ project_uuid: projectId, analysis_run_id: started.analysis_run_id });
      expect(failed.error).to.be.a('string').that.is.not.empty;
      const run = await app.services.orm.em.fork().findOneOrFail(AnalysisRun, started.analysis_run_id as string);
      expect(run.status).to.equal('failed');
      const billingAfter = (await json(await user.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
      expect(billingAfter, 'nothing deducted, nothing still held').to.deep.equal({ balance: billingBefore.balance, reserved: 0 });
      expect((await app.services.orm.em.fork().findOneOrFail(Job, job.id)).status).to.equal('failed');
    } finally {
      stream.close();
    }
  });
});
