// charts/cutroom through Helm 4 against the real API server: lint, template, install, upgrade
// and uninstall, and the values that must fail at render time. The chart's Pods are kept off
// the test node (a node selector no node has): this is about what the API accepts, not about
// running the api and operator images, which the job-path tests do in their own way.
import { expect } from 'chai';
import { AppsV1Api, CoreV1Api, NetworkingV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { applyCrds, kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';

const chart = 'charts/cutroom';
/** The values a real install needs (the Secret's required fields), and every Pod kept off the node. */
const required = [
  '--set', 'secretKey=chart-test-secret', '--set', 'postgresql.url=postgres://cutroom@postgres:5432/cutroom',
  '--set', 'redis.url=redis://redis:6379/0', '--set', 's3.endpoint=http://minio:9000',
  '--set', 's3.accessKeyId=chart-test', '--set', 's3.secretAccessKey=chart-test-secret',
  '--set', 'config.publicBaseUrl=https://cutroom.example.com',
  '--set-string', `api.nodeSelector.cutroom\\.test/no-such-node=true`,
  '--set-string', `operator.nodeSelector.cutroom\\.test/no-such-node=true`,
  '--set-string', `whisper.nodeSelector.cutroom\\.test/no-such-node=true`,
];

interface Manifest { kind: string; metadata: { name: string; namespace?: string } }

describe('the chart with Helm on a real API server', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
  });

  it('helm lint passes with the values a real install gives', async () => {
    const lint = await cluster.helm(['lint', chart, ...required]);
    expect(lint.code, lint.stdout + lint.stderr).to.equal(0);
    expect(lint.stdout).to.match(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('a missing required secret fails at render time, naming the value', async () => {
    const withoutKey = required.filter((arg, i) => !(arg.startsWith('secretKey=') || required[i + 1]?.startsWith('secretKey=')));
    const rendered = await cluster.helm(['template', 'cutroom', chart, ...withoutKey]);
    expect(rendered.code).to.not.equal(0);
    expect(rendered.stderr).to.include('secretKey is required (or set existingSecret)');
  });

  it('a ServiceMonitor asked for where its CRD is absent fails at render time with why; with --api-versions it renders', async () => {
    const absent = await cluster.helm(['template', 'cutroom', chart, ...required, '--set', 'metrics.serviceMonitor.enabled=true']);
    expect(absent.code).to.not.equal(0);
    expect(absent.stderr).to.include("the Prometheus Operator's CRDs");
    const present = await cluster.helm(['template', 'cutroom', chart, ...required, '--set', 'metrics.serviceMonitor.enabled=true', '--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor']);
    expect(present.code, present.stderr).to.equal(0);
    expect(parseAllDocuments(present.stdout).map((d) => (d.toJS() as Manifest | null)?.kind)).to.include('ServiceMonitor');
  });

  it('helm install is accepted whole; upgrade changes it in place; uninstall removes it', async () => {
    const namespace = await testNamespace(cluster, 'chart');
    const rendered = await cluster.helm(['template', 'cutroom', chart, '--namespace', namespace, ...required, '--set', 'api.ingress.enabled=true', '--set', 'api.autoscaling.enabled=true']);
    expect(rendered.code, rendered.stderr).to.equal(0);
    const manifests = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as Manifest | null).filter((m): m is Manifest => m !== null);
    expect(manifests.map((m) => m.kind)).to.include.members(['Deployment', 'Service', 'ServiceAccount', 'Role', 'RoleBinding', 'Ingress', 'Secret', 'ConfigMap', 'HorizontalPodAutoscaler']);

    const install = await cluster.helm(['install', 'cutroom', chart, '--namespace', namespace, ...required, '--set', 'api.ingress.enabled=true', '--set', 'api.autoscaling.enabled=true']);
    expect(install.code, install.stdout + install.stderr).to.equal(0);
    expect(install.stdout).to.match(/STATUS: deployed/);
    // Every object the chart renders is there, as the server stored it.
    for (const manifest of manifests) {
      const got = await cluster.kubectl(['get', manifest.kind, manifest.metadata.name, '--namespace', namespace, '-o', 'name']);
      expect(got.code, `${manifest.kind}/${manifest.metadata.name}: ${got.stderr}`).to.equal(0);
    }
    const kc = cluster.kubeConfig(namespace);
    const apps = kc.makeApiClient(AppsV1Api);
    const deployments = (await apps.listNamespacedDeployment({ namespace })).items;
    expect(deployments.map((d) => d.metadata!.name).sort()).to.deep.equal(manifests.filter((m) => m.kind === 'Deployment').map((m) => m.metadata.name).sort());
    const operator = deployments.find((d) => d.metadata!.name!.endsWith('operator'))!;
    expect(operator.spec!.replicas).to.equal(2);
    expect((await kc.makeApiClient(NetworkingV1Api).listNamespacedIngress({ namespace })).items).to.have.length(1);
    const roles = (await kc.makeApiClient(RbacAuthorizationV1Api).listNamespacedRole({ namespace })).items;
    expect(roles.length).to.be.greaterThan(0);

    const upgrade = await cluster.helm(['upgrade', 'cutroom', chart, '--namespace', namespace, ...required, '--set', 'operator.replicaCount=3']);
    expect(upgrade.code, upgrade.stdout + upgrade.stderr).to.equal(0);
    expect(upgrade.stdout).to.match(/REVISION: 2/);
    expect((await apps.readNamespacedDeployment({ name: operator.metadata!.name!, namespace })).spec!.replicas).to.equal(3);
    // What the upgrade no longer renders is removed.
    expect((await kc.makeApiClient(NetworkingV1Api).listNamespacedIngress({ namespace })).items).to.have.length(0);

    const uninstall = await cluster.helm(['uninstall', 'cutroom', '--namespace', namespace]);
    expect(uninstall.code, uninstall.stdout + uninstall.stderr).to.equal(0);
    expect((await apps.listNamespacedDeployment({ namespace })).items).to.have.length(0);
    const left = (await kc.makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace })).items.map((sa) => sa.metadata!.name);
    expect(left).to.deep.equal(['default']);
  });
});
