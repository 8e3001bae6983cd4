import { analysisJob, artifactJob, renderJob } from '../../operator/src/job-kinds.ts';
import { expect } from 'chai';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { JobResource, JobSpec } from '../../crds/contract/resources.ts';
import { buildJob, InvalidJobResource, jobNameFor } from '../../operator/src/builders/job.ts';
import { failureMessage, mirroredStatus, observeJob, setCondition, statusPatch } from '../../operator/src/builders/status.ts';
import { loadOperatorConfig } from '../../operator/src/config.ts';

const uid = '0f6c1d2e-3a4b-4c5d-8e9f-a0b1c2d3e4f5';
const spec: JobSpec = {
  jobId: '11111111-2222-4333-8444-555555555555',
  program: 'artifact',
  userId: '66666666-7777-4888-8999-aaaaaaaaaaaa',
  mediaFileId: 'bbbbbbbb-cccc-4ddd-8eee-ffffffffffff',
  input: { sourceKey: 'media/x/source', contentType: 'video/mp4' },
  outputPrefix: 'jobs/artifact/11111111-2222-4333-8444-555555555555',
};

function resource(kind: JobResource['kind'], overrides: Partial<JobSpec> = {}): JobResource {
  const full = { ...spec, ...overrides };
  return {
    apiVersion: 'cutroom.dev/v1alpha1',
    kind,
    metadata: { name: `${full.program}-${full.jobId}`, namespace: 'cutroom', uid, generation: 1 },
    spec: full,
  };
}

const config = loadOperatorConfig({
  JOB_IMAGE_FFMPEG: 'registry.example.com/cutroom/job-ffmpeg:0.1.0',
  JOB_IMAGE_WHISPER: 'registry.example.com/cutroom/job-whisper:0.1.0',
  JOB_GPU_COUNT: '1',
  JOB_GPU_NODE_SELECTOR: '{"nvidia.com/gpu.present":"true"}',
  JOB_GPU_TOLERATIONS: '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
  JOB_BACKOFF_LIMIT: '2',
  JOB_TIMEOUT_SECONDS: '3600',
  JOB_TTL_SECONDS_AFTER_FINISHED: '600',
  JOB_SERVICE_ACCOUNT_ANALYSIS: 'cutroom-analysis-job',
  JOB_SERVICE_ACCOUNT_RENDER: 'cutroom-render-job',
  JOB_SERVICE_ACCOUNT_ARTIFACT: 'cutroom-artifact-job',
  JOB_ENV_CONFIGMAP: 'cutroom-config',
  JOB_ENV_SECRET: 'cutroom-credentials',
});

describe('operator builders: the batch Job of a custom resource, as data', () => {
  it('an ArtifactJob → the exact Job manifest: ffmpeg image, env, envFrom, resources, limits, owner, non-root', () => {
    const labels = {
      'app.kubernetes.io/part-of': 'cutroom',
      'cutroom.dev/job-id': spec.jobId,
      'cutroom.dev/program': 'artifact',
      'cutroom.dev/user': spec.userId,
      'cutroom.dev/media': spec.mediaFileId!,
      'app.kubernetes.io/managed-by': 'cutroom-operator',
      'cutroom.dev/kind': 'ArtifactJob',
    };
    const expected: V1Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: `cutroom-${uid}-artifact`,
        namespace: 'cutroom',
        labels,
        ownerReferences: [
          { apiVersion: 'cutroom.dev/v1alpha1', kind: 'ArtifactJob', name: `artifact-${spec.jobId}`, uid, controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: {
        backoffLimit: 2,
        activeDeadlineSeconds: 3600,
        ttlSecondsAfterFinished: 600,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: 'cutroom-artifact-job',
            automountServiceAccountToken: true,
            securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'program',
                image: 'registry.example.com/cutroom/job-ffmpeg:0.1.0',
                command: ['node', 'job-images/ffmpeg/src/main.ts'],
                env: [
                  { name: 'CUTROOM_JOB_SPEC', value: JSON.stringify(spec) },
                  { name: 'CUTROOM_PROGRESS', value: 'kubernetes' },
                  { name: 'CUTROOM_CR_GROUP', value: 'cutroom.dev' },
                  { name: 'CUTROOM_CR_VERSION', value: 'v1alpha1' },
                  { name: 'CUTROOM_CR_PLURAL', value: 'artifactjobs' },
                  { name: 'CUTROOM_CR_NAME', value: `artifact-${spec.jobId}` },
                  { name: 'CUTROOM_CR_NAMESPACE', value: 'cutroom' },
                ],
                envFrom: [{ configMapRef: { name: 'cutroom-config' } }, { secretRef: { name: 'cutroom-credentials' } }],
                resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } },
                terminationMessagePolicy: 'FallbackToLogsOnError',
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
              },
            ],
            volumes: [{ name: 'tmp', emptyDir: {} }],
          },
        },
      },
    };
    expect(buildJob(resource('ArtifactJob'), artifactJob, config)).to.deep.equal(expected);
  });

  it('an AnalysisJob → whisper image; with the Whisper sidecar, the GPU limit on the server and the GPU node selector and tolerations on the pod (the program holds no GPU)', () => {
    const sidecar = { ...config, JOB_WHISPER_PLACEMENT: 'sidecar' as const, JOB_WHISPER_SIDECAR_IMAGE: 'cutroom/whisper-server:0.1.0-cuda', JOB_WHISPER_SIDECAR_MODEL: 'whisper-1' };
    const job = buildJob(resource('AnalysisJob', { program: 'analyze', projectId: spec.userId }), analysisJob, sidecar);
    const pod = job.spec!.template.spec!;
    expect(pod.containers[0]!.image).to.equal('registry.example.com/cutroom/job-whisper:0.1.0');
    expect(pod.containers[0]!.command).to.deep.equal(['node', 'job-images/whisper/src/main.ts']);
    expect(pod.containers[0]!.resources).to.deep.equal({
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '2', memory: '4Gi' },
    });
    expect(pod.initContainers![0]!.resources!.limits).to.include({ 'nvidia.com/gpu': '1' });
    expect(pod.nodeSelector).to.deep.equal({ 'nvidia.com/gpu.present': 'true' });
    expect(pod.tolerations).to.deep.equal([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(pod.serviceAccountName).to.equal('cutroom-analysis-job');
    expect(job.metadata!.name).to.equal(`cutroom-${uid}-analysis`);
    expect(job.metadata!.labels).to.include({ 'cutroom.dev/project': spec.userId });
  });

  it('JOB_GPU_COUNT=0 → no nvidia.com/gpu limit; render and artifact Jobs never get GPU placement', () => {
    const cpuOnly = { ...config, JOB_GPU_COUNT: 0 };
    const analysis = buildJob(resource('AnalysisJob', { program: 'analyze' }), analysisJob, { ...cpuOnly, JOB_WHISPER_PLACEMENT: 'sidecar' as const, JOB_WHISPER_SIDECAR_IMAGE: 'w', JOB_WHISPER_SIDECAR_MODEL: 'm' }).spec!.template.spec!;
    expect(analysis.initContainers![0]!.resources?.limits ?? {}).to.not.have.property('nvidia.com/gpu');
    expect(analysis.containers[0]!.resources!.limits).to.not.have.property('nvidia.com/gpu');
    const render = buildJob(resource('RenderJob', { program: 'render' }), renderJob, config).spec!.template.spec!;
    expect(render.containers[0]!.resources!.limits).to.deep.equal({ cpu: '4', memory: '4Gi' });
    expect(render).to.not.have.any.keys('nodeSelector', 'tolerations');
    expect(render.serviceAccountName).to.equal('cutroom-render-job');
  });

  it('spec.timeoutSeconds becomes activeDeadlineSeconds; without it JOB_TIMEOUT_SECONDS applies', () => {
    expect(buildJob(resource('ArtifactJob', { timeoutSeconds: 90 }), artifactJob, config).spec!.activeDeadlineSeconds).to.equal(90);
    expect(buildJob(resource('ArtifactJob'), artifactJob, config).spec!.activeDeadlineSeconds).to.equal(3600);
  });

  it('no JOB_ENV_CONFIGMAP or JOB_ENV_SECRET → no envFrom', () => {
    const bare = { ...config, JOB_ENV_CONFIGMAP: undefined, JOB_ENV_SECRET: undefined };
    expect(buildJob(resource('ArtifactJob'), artifactJob, bare).spec!.template.spec!.containers[0]).to.not.have.property('envFrom');
  });

  it('the Job name derives from the uid alone and fits 63 characters', () => {
    const name = jobNameFor(resource('ArtifactJob'));
    expect(name).to.equal(jobNameFor({ ...resource('ArtifactJob'), metadata: { uid, name: 'other' } }));
    expect(name).to.match(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    const long = jobNameFor({ kind: 'ArtifactJob', metadata: { uid: `${uid}${uid}` } });
    expect(long.length).to.be.at.most(63);
    expect(long).to.match(/^cutroom-.*-artifact$/);
  });

  it('an unknown program, or a program of another kind → InvalidJobResource naming it', () => {
    expect(() => buildJob(resource('ArtifactJob', { program: 'unknown-thing' }), artifactJob, config)).to.throw(InvalidJobResource, /Unknown job program "unknown-thing"/);
    expect(() => buildJob(resource('RenderJob', { program: 'artifact' }), renderJob, config)).to.throw(InvalidJobResource, /belongs to ArtifactJob resources, not RenderJob/);
  });
});

describe('operator builders: status mirroring, as data', () => {
  const at = '2026-01-02T03:04:05Z';
  const later = '2026-01-02T03:09:00Z';
  const job = (status: V1Job['status']): V1Job => ({ spec: { activeDeadlineSeconds: 600, template: {} }, status });

  it('a Job with a pod in flight is Running; Complete is Succeeded; Failed carries its reason; nothing yet is Pending', () => {
    expect(observeJob(job({}))).to.deep.equal({ phase: 'Pending', startedAt: undefined });
    expect(observeJob(job({ startTime: new Date(at), active: 1 }))).to.deep.equal({ phase: 'Running', startedAt: at });
    // Informer caches hold watch objects with string timestamps.
    expect(observeJob(job({ startTime: at as unknown as Date, failed: 1 }))).to.deep.equal({ phase: 'Running', startedAt: at });
    expect(
      observeJob(job({
        startTime: new Date(at),
        completionTime: new Date(later),
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True' },
          { type: 'Complete', status: 'True', lastTransitionTime: new Date(later) },
        ],
      })),
    ).to.deep.equal({ phase: 'Succeeded', startedAt: at, finishedAt: later });
    expect(observeJob(job({ conditions: [{ type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' }] })).phase).to.equal('Pending');
    expect(
      observeJob(job({ startTime: new Date(at), conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastTransitionTime: new Date(later) }] })),
    ).to.deep.equal({
      phase: 'Failed',
      startedAt: at,
      finishedAt: later,
      failure: { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
    });
  });

  const pod = (message: string | undefined, finishedAt: string): V1Pod => ({
    status: { containerStatuses: [{ name: 'program', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, message, finishedAt: new Date(finishedAt) } } }] },
  });

  it('the error is the newest pod termination message; the Job condition when no pod says; the deadline when it ran out', () => {
    const failure = { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' };
    expect(failureMessage(job({}), failure, [pod('first try failed', at), pod('  moov atom not found\n', later)])).to.equal('moov atom not found');
    expect(failureMessage(job({}), failure, [pod(undefined, at)])).to.equal('The job failed: Job has reached the specified backoff limit');
    expect(failureMessage(job({}), { reason: 'DeadlineExceeded', message: 'x' }, [pod('The job was stopped (SIGTERM) before it finished', at)])).to.equal(
      'The job did not finish within its time limit of 600 s.',
    );
  });

  it('conditions keep lastTransitionTime while their status stays, and move it when it changes', () => {
    const first = setCondition([], { type: 'Running', status: 'True', reason: 'JobActive', message: 'm', observedGeneration: 1 }, at);
    const same = setCondition(first, { type: 'Running', status: 'True', reason: 'JobActive', message: 'm2', observedGeneration: 2 }, later);
    expect(same).to.deep.equal([{ type: 'Running', status: 'True', reason: 'JobActive', message: 'm2', observedGeneration: 2, lastTransitionTime: at }]);
    const flipped = setCondition(same, { type: 'Running', status: 'False', reason: 'JobFinished', message: 'm', observedGeneration: 2 }, later);
    expect(flipped[0]!.lastTransitionTime).to.equal(later);
  });

  it('Running → phase, jobName, startedAt, conditions and observedGeneration; progress and step stay the program’s', () => {
    const current = { phase: 'Pending' as const, progress: 40, step: 'probing' };
    const desired = mirroredStatus(current, { phase: 'Running', jobName: 'cutroom-x-artifact', startedAt: at, generation: 3 }, later);
    expect(desired).to.deep.equal({
      phase: 'Running',
      jobName: 'cutroom-x-artifact',
      startedAt: at,
      conditions: [
        { type: 'JobCreated', status: 'True', reason: 'JobCreated', message: 'Job cutroom-x-artifact runs the program.', observedGeneration: 3, lastTransitionTime: later },
        { type: 'Running', status: 'True', reason: 'JobActive', message: 'The program is running.', observedGeneration: 3, lastTransitionTime: later },
      ],
      observedGeneration: 3,
    });
    expect(statusPatch(current, desired)).to.not.have.any.keys('progress', 'step');
  });

  it('Succeeded → progress 100 and finishedAt; Failed → error and a Failed condition with the Job’s reason', () => {
    const succeeded = mirroredStatus(undefined, { phase: 'Succeeded', jobName: 'j', startedAt: at, finishedAt: later, generation: 1 }, later);
    expect(succeeded).to.include({ phase: 'Succeeded', progress: 100, finishedAt: later });
    expect(succeeded.conditions!.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['JobCreated=True', 'Running=False', 'Complete=True']);
    const failed = mirroredStatus(undefined, { phase: 'Failed', jobName: 'j', error: 'moov atom not found', reason: 'BackoffLimitExceeded', finishedAt: later, generation: 1 }, later);
    expect(failed).to.include({ phase: 'Failed', error: 'moov atom not found' }).and.not.have.property('progress');
    expect(failed.conditions!.find((c) => c.type === 'Failed')).to.include({ status: 'True', reason: 'BackoffLimitExceeded', message: 'moov atom not found' });
    const oddReason = mirroredStatus(undefined, { phase: 'Failed', error: 'e', reason: 'not a reason!', generation: 1 }, later);
    expect(oddReason.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('JobFailed');
  });

  it('a status already right → no patch (so the operator’s own writes do not loop)', () => {
    const desired = mirroredStatus(undefined, { phase: 'Running', jobName: 'j', startedAt: at, generation: 1 }, at);
    expect(statusPatch({ ...desired, progress: 12, step: 'waveform' }, mirroredStatus(desired, { phase: 'Running', jobName: 'j', startedAt: at, generation: 1 }, later))).to.equal(null);
  });
});
