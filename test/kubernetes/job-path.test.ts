// The job path on a real control plane: the api (as the chart's api ServiceAccount) creates
// job resources; the operator (as the chart's operator ServiceAccount, configured as the chart's
// Deployment) makes batch/v1 Jobs; the real Job controller makes their Pods; the real scheduler
// binds them to the test node; the node agent runs each Pod's own command — the real job
// program, with the Pod's environment, ServiceAccount token and user — and reports its end; the
// operator settles the job, and the creator gets the result.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { fileWhen } from '../support/wait.ts';
import { dataOf, isEvent, openSse } from '../support/sse-stream.ts';
import { listenToUser } from '../support/events.ts';
import { makeCorruptFile, makeSpeechWav, makeVideo } from '../support/media.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { applyCrds, kubeCluster } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode } from '../support/kube-node.ts';
import { installRelease, startReleaseOperator } from '../support/kube-release.ts';
import type { Release } from '../support/kube-release.ts';
import type { TestOperator } from '../operator/operator-support.ts';

const run = promisify(execFile);

describe('the job path on a real control plane: api → resource → operator → Job → Pod → program → settled', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let release: Release;
  let app: TestApp;
  let operator: TestOperator;
  let user: SignedIn;
  let dir: string;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    await kubeNode(cluster);
    release = await installRelease(cluster, 'job-path');
    dir = await mkdtemp(join(tmpdir(), 'cutroom-job-path-'));
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: release.namespace }, { kubeConfig: release.apiKubeConfig });
    operator = await startReleaseOperator(release);
    user = await signUpAndLogin(app, { tier: 'Creator', credits: 10 });
  });
  after(async () => {
    // Everything the operator did under the chart's RBAC was allowed: no request of it was refused.
    const refused = (operator?.logs ?? []).filter((line) => /forbidden|\b403\b/i.test(JSON.stringify(line)));
    expect(refused, JSON.stringify(refused.slice(0, 3))).to.deep.equal([]);
    await operator?.stop();
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function uploaded(path: string, contentType: string, projectId?: string) {
    const media = await uploadMedia(user.client, path, { contentType, ...(projectId ? { scopeProjectId: projectId } : {}) });
    await fileWhen(app.services.orm, media.mediaFileId, (file) => file.status !== 'PROCESSING', 120_000);
    return media;
  }

  it('an upload\'s artifact job, then an export: the render program runs in its Pod, the file downloads and plays, and kubectl describe shows the operator\'s Events', async () => {
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Cluster' }))).uuid as string;
    const video = await makeVideo(dir, 'source.mp4', { width: 640, height: 360, seconds: 4, fps: 25 });
    const media = await uploaded(video, 'video/mp4', projectId);
    expect((await app.services.orm.em.fork().findOneOrFail(MediaFile, media.mediaFileId)).status).to.equal('UPLOADED');

    const cut = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms: 1000, end_ms: 2000, active: true, reason: 'cough' });
    expect(cut.status, await cut.clone().text()).to.equal(201);
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    let exportId: string;
    try {
      const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Cluster', export_settings: { resolution: '720p' } });
      expect(response.status, await response.clone().text()).to.equal(202);
      exportId = (await json(response)).uuid;
      const { frame, before } = await stream.until((f) => isEvent('export_complete')(f) || isEvent('export_failed')(f), 240_000);
      expect(frame, JSON.stringify(before)).to.match(/^event: export_complete/);
      expect(dataOf(frame)).to.deep.include({ export_uuid: exportId });
    } finally {
      stream.close();
    }
    const download = await json(await user.client.get(`/api/v1/exports/${exportId}/download`));
    const file = await fetch(download.url);
    expect(file.status).to.equal(200);
    const path = join(dir, 'downloaded.mp4');
    await writeFile(path, Buffer.from(await file.arrayBuffer()));
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,height:format=duration', '-of', 'json', path]);
    const probed = JSON.parse(stdout) as { streams: { codec_type: string; codec_name: string; height?: number }[]; format: { duration: string } };
    expect(probed.streams.find((s) => s.codec_type === 'video')).to.deep.include({ codec_name: 'h264', height: 720 });
    expect(Math.abs(Number(probed.format.duration) - 3)).to.be.lessThan(0.07);

    // The resource, as an operator of the cluster sees it.
    const resources = (await release.operatorKubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace: release.namespace, plural: 'renderjobs' })) as { items: { metadata: { name: string }; status?: { phase?: string; progress?: number } }[] };
    expect(resources.items).to.have.length(1);
    expect(resources.items[0]!.status).to.deep.include({ phase: 'Succeeded', progress: 100 });
    const described = await cluster.kubectl(['describe', 'renderjob', resources.items[0]!.metadata.name, '--namespace', release.namespace]);
    expect(described.code, described.stderr).to.equal(0);
    expect(described.stdout).to.match(/Events:[\s\S]*JobCreated[\s\S]*JobSucceeded/);
  });

  it('an analysis job: the analysis program transcribes in its Pod and the run completes with words', async () => {
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Spoken' }))).uuid as string;
    const speech = await makeSpeechWav(dir, 'speech.wav', [{ silenceSeconds: 0.5 }, { say: 'hello and welcome back to the channel' }, { silenceSeconds: 1.5 }, { say: 'today we cut a video together' }]);
    const media = await uploaded(speech, 'audio/wav', projectId);
    expect(media.mediaFileId).to.be.a('string');
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    try {
      const answer = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
      expect(answer.status, await answer.clone().text()).to.equal(200);
      const { frame, before } = await stream.until((f) => isEvent('analysis_complete')(f) || isEvent('analysis_failed')(f), 240_000);
      expect(frame, JSON.stringify(before)).to.match(/^event: analysis_complete/);
    } finally {
      stream.close();
    }
    const project = await json(await user.client.get(`/api/v1/projects/${projectId}`));
    expect(JSON.stringify(project.transcript).toLowerCase()).to.include('welcome');
  });

  it('a failing program: its exit code and message reach the user as media_failed', async () => {
    const corrupt = await makeCorruptFile(dir, 'corrupt.mp4');
    const events = await listenToUser(app.services.bus, user.user.id);
    try {
      const media = await uploadMedia(user.client, corrupt, { contentType: 'video/mp4' });
      const failed = await events.next('media_failed', 120_000);
      expect(failed.data).to.deep.include({ media_file_uuid: media.mediaFileId });
      expect(String((failed.data as { error?: string }).error)).to.match(/corrupt|not a (video|media)|could not be read/i);
    } finally {
      await events.close();
    }
  });
});
