// charts/cutroom installed with Helm into a namespace of the test control plane, pointed at this
// test world's S3 and Whisper server, with its Deployments kept off the node (a node selector no
// node has): the tests run the api and the operator in-process instead, each under a token of
// the ServiceAccount the chart made for it (TokenRequest), with the operator's environment read
// from the Deployment the chart rendered. Job Pods, which the operator makes, run on the node.
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { operatorEnv, startTestOperatorWith } from '../operator/operator-support.ts';
import type { TestOperator } from '../operator/operator-support.ts';
import { testNamespace } from './kube-cluster.ts';
import type { KubeCluster } from './kube-cluster.ts';

export interface Release {
  namespace: string;
  name: string;
  /** The operator Deployment's container env, as the chart rendered it (plain values only). */
  operatorEnv: Record<string, string>;
  /** The chart's ServiceAccounts of the operator and the api, and client configurations as them. */
  operatorServiceAccount: string;
  apiServiceAccount: string;
  operatorKubeConfig: KubeConfig;
  apiKubeConfig: KubeConfig;
  /** A bearer token of a ServiceAccount of the namespace. */
  tokenOf(serviceAccount: string): Promise<string>;
}

const offTheNode = ['api', 'operator', 'whisper'].flatMap((component) => ['--set-string', `${component}.nodeSelector.cutroom\\.test/no-such-node=true`]);

/** The values of a release that works against this test world's S3 and Whisper server. */
function worldValues(): string[] {
  const env = process.env;
  const set = (key: string, value: string) => ['--set-string', `${key}=${value}`];
  return [
    ...set('secretKey', 'kube-release-test'),
    ...set('postgresql.url', env.DATABASE_URL ?? ''),
    ...set('redis.url', env.REDIS_URL ?? ''),
    ...set('s3.endpoint', env.S3_ENDPOINT ?? ''),
    ...set('s3.bucket', env.S3_BUCKET ?? ''),
    ...set('s3.region', env.S3_REGION ?? ''),
    ...set('s3.accessKeyId', env.S3_ACCESS_KEY_ID ?? ''),
    ...set('s3.secretAccessKey', env.S3_SECRET_ACCESS_KEY ?? ''),
    ...set('config.publicBaseUrl', 'http://127.0.0.1'),
    ...set('config.nodeEnv', 'test'),
    '--set', 'whisper.enabled=false',
    ...set('whisper.external.baseUrl', env.WHISPER_BASE_URL ?? ''),
    '--set', 'jobs.backoffLimit=0',
    ...offTheNode,
  ];
}

export async function installRelease(cluster: KubeCluster, prefix: string, values: string[] = []): Promise<Release> {
  const namespace = await testNamespace(cluster, prefix);
  const name = 'cutroom';
  const install = await cluster.helm(['install', name, 'charts/cutroom', '--namespace', namespace, ...worldValues(), ...values]);
  if (install.code !== 0) throw new Error(`helm install failed: ${install.stderr}`);
  const admin = cluster.kubeConfig(namespace);
  const deployments = (await admin.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace })).items;
  const operator = deployments.find((d) => d.metadata?.labels?.['app.kubernetes.io/component'] === 'operator');
  const api = deployments.find((d) => d.metadata?.labels?.['app.kubernetes.io/component'] === 'api');
  if (!operator || !api) throw new Error(`the release has no operator or api Deployment: ${deployments.map((d) => d.metadata?.name).join(', ')}`);
  const operatorEnv = Object.fromEntries(
    (operator.spec!.template.spec!.containers[0]!.env ?? []).filter((entry) => entry.value !== undefined).map((entry) => [entry.name, entry.value!]),
  );
  const core = admin.makeApiClient(CoreV1Api);
  const tokenOf = async (serviceAccount: string) => {
    const request = await core.createNamespacedServiceAccountToken({ name: serviceAccount, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const token = request.status?.token;
    if (!token) throw new Error(`no token for the ServiceAccount ${serviceAccount}`);
    return token;
  };
  const operatorServiceAccount = operator.spec!.template.spec!.serviceAccountName!;
  const apiServiceAccount = api.spec!.template.spec!.serviceAccountName!;
  return {
    namespace,
    name,
    operatorEnv,
    operatorServiceAccount,
    apiServiceAccount,
    operatorKubeConfig: cluster.kubeConfig(namespace, await tokenOf(operatorServiceAccount)),
    apiKubeConfig: cluster.kubeConfig(namespace, await tokenOf(apiServiceAccount)),
    tokenOf,
  };
}

/**
 * An operator replica in this process, configured as the chart's Deployment configures it and
 * acting under the chart's operator ServiceAccount, with lease timings short enough for tests.
 */
export async function startReleaseOperator(release: Release, env: Record<string, string> = {}): Promise<TestOperator> {
  const base = operatorEnv(release.namespace);
  return startTestOperatorWith(release.operatorKubeConfig, {
    ...release.operatorEnv,
    POD_NAME: base.POD_NAME!,
    OPERATOR_METRICS_HOST: '127.0.0.1',
    OPERATOR_METRICS_PORT: '0',
    ...Object.fromEntries(Object.entries(base).filter(([key]) => key.startsWith('OPERATOR_LEASE_') && key !== 'OPERATOR_LEASE_NAME')),
    OPERATOR_RETRY_BASE_MS: base.OPERATOR_RETRY_BASE_MS!,
    OPERATOR_RETRY_MAX_MS: base.OPERATOR_RETRY_MAX_MS!,
    ...env,
  });
}
