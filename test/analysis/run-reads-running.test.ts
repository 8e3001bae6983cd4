import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { projectWithSources } from '../support/projects.ts';
import { signUpAndLogin } from '../support/users.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { resourceNamespace } from '../support/kube-cluster.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { MediaFile } from '../../api/src/media/entities.ts';

/**
 * Issue 22 item 7: an analysis run reads `running` while its job runs (it read `queued` until
 * it ended). The job goes to a namespace of the test control plane where no operator runs, so
 * the test reports its start as a backend does.
 */
describe('an analysis run reads running while it runs', function () {
  this.timeout(60_000);
  let namespace: string;
  let kubeConfig: KubeConfig;
  let app: TestApp;

  before(async () => {
    ({ namespace, kubeConfig } = await resourceNamespace('analysis-running'));
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace }, { kubeConfig });
  });
  after(async () => {
    await app?.close();
  });

  it('queued when asked for, running once the backend started its job', async () => {
    const user = await signUpAndLogin(app, { credits: 5 });
    const projectId = await projectWithSources(app, user, [30_000]);
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { uploaderId: user.user.id }, { audioKey: 'audio/placeholder.m4a' });
    const analyzed = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
    expect(analyzed.status, await analyzed.clone().text()).to.equal(200);
    const statusOfRun = async (): Promise<string> => {
      const body = await json(await user.client.get(`/api/v1/projects/${projectId}/analysis-runs`));
      return body.data[0].status;
    };
    expect(await statusOfRun()).to.equal('queued');

    const job = await app.services.orm.em.fork().findOneOrFail(Job, { projectId, program: 'analyze' });
    await app.services.completion.markProgress(job.id, { status: 'running', startedAt: new Date() });
    expect(await statusOfRun()).to.equal('running');
  });
});
