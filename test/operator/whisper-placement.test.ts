import { analysisJob, artifactJob, renderJob } from '../../operator/src/job-kinds.ts';
import { expect } from 'chai';
import type { V1Container, V1Job, V1PodSpec } from '@kubernetes/client-node';
import type { JobResource, JobSpec } from '../../crds/contract/resources.ts';
import { ConfigError } from '../../api/src/config.ts';
import { buildJob } from '../../operator/src/builders/job.ts';
import { loadOperatorConfig, whisperWeights } from '../../operator/src/config.ts';

const uid = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const spec: JobSpec = {
  jobId: '22222222-3333-4444-8555-666666666666',
  program: 'analyze',
  userId: '77777777-8888-4999-8aaa-bbbbbbbbbbbb',
  projectId: 'cccccccc-dddd-4eee-8fff-000000000000',
  input: { sourceKey: 'media/x/source', contentType: 'video/mp4' },
  outputPrefix: 'jobs/analysis/22222222-3333-4444-8555-666666666666',
};

function resource(kind: JobResource['kind'], program: string): JobResource {
  return {
    apiVersion: 'cutroom.dev/v1alpha1',
    kind,
    metadata: { name: `${program}-${spec.jobId}`, namespace: 'cutroom', uid, generation: 1 },
    spec: { ...spec, program },
  };
}

/** What the chart renders for a GPU cluster; only JOB_WHISPER_PLACEMENT differs between the two placements. */
const chartEnv = {
  JOB_IMAGE_FFMPEG: 'registry.example.com/cutroom/job-ffmpeg:0.1.0',
  JOB_IMAGE_WHISPER: 'registry.example.com/cutroom/job-whisper:0.1.0',
  JOB_WHISPER_SIDECAR_IMAGE: 'registry.example.com/cutroom/whisper-server:0.1.0-cuda',
  JOB_WHISPER_SIDECAR_WEIGHTS: 'tiny.en',
  JOB_WHISPER_SIDECAR_MODEL: 'whisper-1',
  JOB_WHISPER_SIDECAR_PORT: '8011',
  JOB_WHISPER_SIDECAR_RESOURCES: '{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"memory":"2Gi"}}',
  JOB_GPU_COUNT: '1',
  JOB_GPU_NODE_SELECTOR: '{"nvidia.com/gpu.present":"true"}',
  JOB_GPU_TOLERATIONS: '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
  JOB_ENV_CONFIGMAP: 'cutroom-job',
  JOB_ENV_SECRET: 'cutroom-job',
};
const shared = loadOperatorConfig({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'shared' });
const sidecar = loadOperatorConfig({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'sidecar' });

const podOf = (job: V1Job): V1PodSpec => job.spec!.template.spec!;
const analysisPod = (config: typeof shared): V1PodSpec => podOf(buildJob(resource('AnalysisJob', 'analyze'), analysisJob, config));
const programOf = (pod: V1PodSpec): V1Container => pod.containers.find((container) => container.name === 'program')!;

/** Every key anywhere in a value: a GPU request hides nowhere. */
function keysIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysIn(inner)]);
}

describe('Whisper placement: the analysis Job manifest, as data', () => {
  it('JOB_WHISPER_PLACEMENT defaults to shared', () => {
    expect(chartEnv).to.not.have.property('JOB_WHISPER_PLACEMENT');
    expect(loadOperatorConfig(chartEnv).JOB_WHISPER_PLACEMENT).to.equal('shared');
  });

  describe('shared: analysis Jobs call the Whisper Deployment', () => {
    const pod = analysisPod(shared);

    it('no nvidia.com/gpu anywhere in the pod, even with JOB_GPU_COUNT=1', () => {
      expect(keysIn(pod)).to.not.include('nvidia.com/gpu');
      expect(programOf(pod).resources).to.deep.equal({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '4Gi' } });
    });

    it('no GPU node selector or tolerations: the pod is not placed on GPU nodes', () => {
      expect(pod).to.not.have.any.keys('nodeSelector', 'tolerations', 'affinity');
    });

    it('one container, no sidecar; WHISPER_BASE_URL comes from the job ConfigMap, not the manifest', () => {
      expect(pod).to.not.have.property('initContainers');
      expect(pod.containers.map((container) => container.name)).to.deep.equal(['program']);
      const program = programOf(pod);
      expect(program.envFrom).to.deep.include({ configMapRef: { name: 'cutroom-job' } });
      expect(program.env!.map((entry) => entry.name)).to.not.include.members(['WHISPER_BASE_URL', 'WHISPER_MODEL']);
      expect(pod.volumes).to.deep.equal([{ name: 'tmp', emptyDir: {} }]);
    });
  });

  describe('sidecar: each analysis pod runs the Whisper server next to the program', () => {
    const pod = analysisPod(sidecar);
    const server = pod.initContainers?.[0];

    it('a native sidecar: one init container with restartPolicy Always running the server image', () => {
      expect(pod.initContainers).to.have.length(1);
      expect(server).to.include({ name: 'whisper', image: 'registry.example.com/cutroom/whisper-server:0.1.0-cuda', restartPolicy: 'Always' });
      // The pod's own restart policy stays Never: the Job, not the kubelet, retries a failed program.
      expect(pod.restartPolicy).to.equal('Never');
      expect(programOf(pod)).to.not.have.property('restartPolicy');
    });

    it('the server holds the GPU limit, with its own CPU and memory; the program holds no GPU', () => {
      expect(server!.resources).to.deep.equal({
        requests: { cpu: '1', memory: '1Gi' },
        limits: { memory: '2Gi', 'nvidia.com/gpu': '1' },
      });
      expect(keysIn(programOf(pod))).to.not.include('nvidia.com/gpu');
      expect(programOf(pod).resources).to.deep.equal({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '4Gi' } });
    });

    it('the server runs JOB_WHISPER_SIDECAR_WEIGHTS on CUDA, one transcription at a time, on its port on every address (the kubelet probes the pod IP)', () => {
      expect(server!.env).to.deep.equal([
        { name: 'WHISPER_HOST', value: '0.0.0.0' },
        { name: 'WHISPER_PORT', value: '8011' },
        { name: 'WHISPER_WEIGHTS', value: 'tiny.en' },
        { name: 'WHISPER_DEVICE', value: 'cuda' },
        { name: 'WHISPER_CONCURRENCY', value: '1' },
      ]);
      expect(server!.ports).to.deep.equal([{ name: 'whisper', containerPort: 8011, protocol: 'TCP' }]);
      expect(server, 'no S3 keys or job settings for the server').to.not.have.property('envFrom');
    });

    it('a startup probe on its port gates the program (two minutes: the weights are in the image); no liveness probe', () => {
      expect(server!.startupProbe).to.deep.equal({ httpGet: { path: '/health', port: 'whisper' }, periodSeconds: 2, failureThreshold: 60 });
      const probed = server!.ports!.find((port) => port.name === server!.startupProbe!.httpGet!.port);
      expect(probed!.containerPort).to.equal(8011);
      expect(server).to.not.have.property('livenessProbe');
    });

    it('the program gets WHISPER_BASE_URL=http://127.0.0.1:<port>/v1 and the model, and waits for nothing else', () => {
      const program = programOf(pod);
      expect(program.env).to.deep.include({ name: 'WHISPER_BASE_URL', value: 'http://127.0.0.1:8011/v1' });
      expect(program.env).to.deep.include({ name: 'WHISPER_MODEL', value: 'whisper-1' });
      expect(program.command).to.deep.equal(['node', 'job-images/whisper/src/main.ts']);
      expect(program.image).to.equal('registry.example.com/cutroom/job-whisper:0.1.0');
      expect(pod.containers.map((container) => container.name)).to.deep.equal(['program']);
    });

    it('GPU node selector and tolerations on the pod', () => {
      expect(pod.nodeSelector).to.deep.equal({ 'nvidia.com/gpu.present': 'true' });
      expect(pod.tolerations).to.deep.equal([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    });

    it('no model cache: the server runs non-root on a read-only root filesystem with a /tmp emptyDir of its own (uploads)', () => {
      expect(server!.volumeMounts).to.deep.equal([{ name: 'whisper-tmp', mountPath: '/tmp' }]);
      expect(pod.volumes).to.deep.equal([{ name: 'tmp', emptyDir: {} }, { name: 'whisper-tmp', emptyDir: {} }]);
      expect(server!.securityContext).to.deep.equal({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(pod.securityContext).to.include({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
      expect(keysIn(pod)).to.not.include('persistentVolumeClaim');
    });

    it('JOB_GPU_COUNT=0 → the server runs on CPU with no GPU limit', () => {
      const cpu = analysisPod({ ...sidecar, JOB_GPU_COUNT: 0 });
      expect(keysIn(cpu)).to.not.include('nvidia.com/gpu');
      expect(cpu.initContainers![0]!.env).to.deep.include({ name: 'WHISPER_DEVICE', value: 'cpu' });
    });
  });

  it('ArtifactJob and RenderJob manifests are the same under either placement, without sidecar or GPU', () => {
    const defaults = loadOperatorConfig({ JOB_IMAGE_FFMPEG: chartEnv.JOB_IMAGE_FFMPEG, JOB_IMAGE_WHISPER: chartEnv.JOB_IMAGE_WHISPER, JOB_ENV_CONFIGMAP: 'cutroom-job', JOB_ENV_SECRET: 'cutroom-job' });
    for (const [kind, program, profile] of [['ArtifactJob', 'artifact', artifactJob], ['RenderJob', 'render', renderJob]] as const) {
      const ofShared = buildJob(resource(kind, program), profile, shared);
      expect(buildJob(resource(kind, program), profile, sidecar), kind).to.deep.equal(ofShared);
      expect(buildJob(resource(kind, program), profile, defaults), `${kind} without any Whisper setting`).to.deep.equal(ofShared);
      const pod = podOf(ofShared);
      expect(pod, kind).to.not.have.any.keys('initContainers', 'nodeSelector', 'tolerations');
      expect(keysIn(pod), kind).to.not.include('nvidia.com/gpu');
      expect(pod.volumes, kind).to.deep.equal([{ name: 'tmp', emptyDir: {} }]);
    }
  });
});

describe('Whisper placement: the operator configuration', () => {
  const failure = (env: Record<string, string>): string => {
    try {
      loadOperatorConfig(env);
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('JOB_WHISPER_PLACEMENT is shared or sidecar, nothing else', () => {
    expect(failure({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'gpu' })).to.match(/JOB_WHISPER_PLACEMENT/);
    expect(failure({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'Sidecar' })).to.match(/JOB_WHISPER_PLACEMENT/);
  });

  it('sidecar without the server image or model stops start-up naming the variable', () => {
    expect(failure({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'sidecar', JOB_WHISPER_SIDECAR_IMAGE: '' })).to.match(/JOB_WHISPER_SIDECAR_IMAGE: is required with JOB_WHISPER_PLACEMENT=sidecar/);
    expect(failure({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'sidecar', JOB_WHISPER_SIDECAR_MODEL: '' })).to.match(/JOB_WHISPER_SIDECAR_MODEL: is required/);
    expect(loadOperatorConfig({ ...chartEnv, JOB_WHISPER_PLACEMENT: 'shared', JOB_WHISPER_SIDECAR_IMAGE: '', JOB_WHISPER_SIDECAR_MODEL: '' }).JOB_WHISPER_PLACEMENT).to.equal('shared');
  });

  it('JOB_WHISPER_SIDECAR_WEIGHTS is one of the weights in the server image, base unless set', () => {
    expect([...whisperWeights]).to.deep.equal(['base', 'tiny.en']);
    const { JOB_WHISPER_SIDECAR_WEIGHTS: _weights, ...unset } = chartEnv;
    const byDefault = loadOperatorConfig({ ...unset, JOB_WHISPER_PLACEMENT: 'sidecar' });
    expect(byDefault.JOB_WHISPER_SIDECAR_WEIGHTS).to.equal('base');
    expect(analysisPod(byDefault).initContainers![0]!.env).to.deep.include({ name: 'WHISPER_WEIGHTS', value: 'base' });
    for (const weights of ['small', 'Systran/faster-whisper-small', 'Base', '']) {
      expect(failure({ ...chartEnv, JOB_WHISPER_SIDECAR_WEIGHTS: weights }), weights).to.match(/JOB_WHISPER_SIDECAR_WEIGHTS/);
    }
  });

  it('sidecar resources as the chart renders them: quantities as strings or bare numbers; a bad port or key is refused', () => {
    const config = loadOperatorConfig({ ...chartEnv, JOB_WHISPER_SIDECAR_RESOURCES: '{"requests":{"cpu":1,"memory":"2Gi"}}' });
    expect(config.JOB_WHISPER_SIDECAR_RESOURCES).to.deep.equal({ requests: { cpu: '1', memory: '2Gi' } });
    expect(loadOperatorConfig({ ...chartEnv, JOB_WHISPER_SIDECAR_RESOURCES: '{}' }).JOB_WHISPER_SIDECAR_RESOURCES).to.deep.equal({});
    expect(failure({ ...chartEnv, JOB_WHISPER_SIDECAR_RESOURCES: '{"request":{}}' })).to.match(/JOB_WHISPER_SIDECAR_RESOURCES/);
    expect(failure({ ...chartEnv, JOB_WHISPER_SIDECAR_PORT: '70000' })).to.match(/JOB_WHISPER_SIDECAR_PORT/);
  });
});
