// The test control plane itself (test/support/kube-cluster.ts and kube-node.ts): the pinned
// versions answer, and a Job's Pod is created by the real Job controller, bound by the real
// scheduler and run by the node agent with what the Pod says.
import { expect } from 'chai';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { V1Job } from '@kubernetes/client-node';
import { eventually } from '../../hack/fixtures/wait.ts';
import { kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode } from '../support/kube-node.ts';

function shellJob(name: string, script: string, extra: Partial<V1Job['spec']> = {}): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      ...extra,
      template: {
        spec: {
          restartPolicy: 'Never',
          securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
          containers: [{
            name: 'main', image: 'registry.test/shell:1', command: ['sh', '-c', script],
            env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'GREETING', value: 'hello' }],
            volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
          }],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  };
}

describe('the test control plane: etcd, kube-apiserver, controller-manager, scheduler and a node agent', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let namespace: string;
  let batch: BatchV1Api;
  let core: CoreV1Api;

  before(async () => {
    cluster = await kubeCluster();
    await kubeNode(cluster);
    namespace = await testNamespace(cluster, 'control-plane');
    batch = cluster.kubeConfig(namespace).makeApiClient(BatchV1Api);
    core = cluster.kubeConfig(namespace).makeApiClient(CoreV1Api);
  });

  it('kubectl version tells the pinned version for the client and the server', async () => {
    const version = await cluster.kubectl(['version', '-o', 'json']);
    expect(version.code, version.stderr).to.equal(0);
    const { clientVersion, serverVersion } = JSON.parse(version.stdout) as Record<string, { gitVersion: string; gitTreeState: string }>;
    const pinned = process.env.KUBE_VERSION;
    expect(pinned, 'hack/test.sh exports KUBE_VERSION').to.match(/^v1\.\d+\.\d+$/);
    expect(clientVersion!.gitVersion).to.equal(pinned);
    expect(serverVersion!.gitVersion).to.equal(pinned);
    expect(serverVersion!.gitTreeState).to.equal('clean');
  });

  it('a Job runs its Pod\'s command as the Pod\'s user, with its env, and completes', async () => {
    await batch.createNamespacedJob({ namespace, body: shellJob('succeeds', 'test "$(id -u)" = 1000 && test "$GREETING" = hello && test -n "$POD_NAME" && touch /tmp/scratch && echo done > /dev/termination-log') });
    const job = await eventually(async () => {
      const current = await batch.readNamespacedJob({ name: 'succeeds', namespace });
      return current.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? current : undefined;
    }, 'the Job to complete', 60_000, 200);
    expect(job.status?.succeeded).to.equal(1);
    const pods = await core.listNamespacedPod({ namespace, labelSelector: 'job-name=succeeds' });
    expect(pods.items).to.have.length(1);
    const pod = pods.items[0]!;
    expect(pod.spec?.nodeName, 'bound by the scheduler').to.be.a('string').and.not.equal('');
    expect(pod.status?.phase).to.equal('Succeeded');
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated).to.deep.include({ exitCode: 0, reason: 'Completed', message: 'done\n' });
  });

  it('a failing command fails the Job, with its exit code and termination message on the Pod', async () => {
    await batch.createNamespacedJob({ namespace, body: shellJob('fails', 'echo "no such input" > /dev/termination-log; exit 3') });
    await eventually(async () => {
      const current = await batch.readNamespacedJob({ name: 'fails', namespace });
      return current.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True') ? current : undefined;
    }, 'the Job to fail', 60_000, 200);
    const pods = await core.listNamespacedPod({ namespace, labelSelector: 'job-name=fails' });
    expect(pods.items[0]!.status?.containerStatuses?.[0]?.state?.terminated).to.deep.include({ exitCode: 3, reason: 'Error', message: 'no such input\n' });
  });

  it('a Job past its activeDeadlineSeconds fails with DeadlineExceeded and its running Pod is stopped', async () => {
    await batch.createNamespacedJob({ namespace, body: shellJob('overdue', 'sleep 600', { activeDeadlineSeconds: 2 }) });
    const job = await eventually(async () => {
      const current = await batch.readNamespacedJob({ name: 'overdue', namespace });
      return current.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    }, 'the Job to fail', 60_000, 200);
    expect(job.reason).to.equal('DeadlineExceeded');
    await eventually(async () => ((await core.listNamespacedPod({ namespace, labelSelector: 'job-name=overdue' })).items.length === 0 ? true : undefined), 'its Pod to be gone', 60_000, 200);
  });
});
