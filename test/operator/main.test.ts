import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { eventually } from '../support/wait.ts';
import { kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { operatorEnv, repoRoot } from './operator-support.ts';

const MAIN = join(repoRoot, 'operator/src/main.ts');

/** `node operator/src/main.ts` with the given environment; stdout parsed as JSON log lines. */
function startMain(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [MAIN], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: { msg: string; [field: string]: unknown }[] = [];
  let stderr = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as (typeof logs)[number]);
    } catch {
      // Not a log line.
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, logs, exited, stderr: () => stderr };
}

describe('operator process (node operator/src/main.ts) on the real API server', function () {
  this.timeout(60_000);
  let cluster: KubeCluster;
  let dir: string;
  let kubeconfig: string;
  let namespace: string;

  before(async () => {
    cluster = await kubeCluster();
    namespace = await testNamespace(cluster, 'main-process');
    dir = await mkdtemp(join(tmpdir(), 'cutroom-operator-main-'));
    kubeconfig = join(dir, 'kubeconfig');
    // What ~/.kube/config would say; in a pod the in-cluster config is used instead.
    await writeFile(kubeconfig, cluster.kubeConfig(namespace).exportConfig());
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('leads, serves /healthz and /metrics, and on SIGTERM releases the Lease and exits 0', async () => {
    const env = { ...process.env, ...operatorEnv(namespace), KUBECONFIG: kubeconfig, LOG_LEVEL: 'info' } as Record<string, string>;
    const main = startMain(env);
    try {
      const started = await eventually(async () => main.logs.find((line) => line.msg === 'operator started'), 'the operator to start', 15_000);
      await eventually(async () => (main.logs.some((line) => line.msg === 'started leading') ? true : undefined), 'it to lead', 5000);
      const leases = cluster.kubeConfig(namespace).makeApiClient(CoordinationV1Api);
      const lease = async () => (await leases.readNamespacedLease({ name: 'cutroom-operator', namespace })).spec!;
      expect((await lease()).holderIdentity).to.equal(env.POD_NAME);

      const health = await fetch(`${String(started.metrics)}/healthz`);
      expect(await health.json()).to.deep.equal({ status: 'ok', leader: true });
      const metrics = await (await fetch(`${String(started.metrics)}/metrics`)).text();
      expect(metrics).to.match(/^cutroom_operator_leader 1$/m);

      main.child.kill('SIGTERM');
      expect(await main.exited).to.equal(0);
      expect((await lease()).holderIdentity ?? '').to.equal('');
      expect(main.logs.map((line) => line.msg)).to.include.members(['shutting down', 'lease released', 'operator stopped']);
    } finally {
      main.child.kill('SIGKILL');
    }
  });

  it('a bad configuration stops it at start with exit code 2, naming the variable', async () => {
    const env = { ...process.env, ...operatorEnv(namespace), KUBECONFIG: kubeconfig, JOB_GPU_TOLERATIONS: 'not json' } as Record<string, string>;
    const main = startMain(env);
    expect(await main.exited).to.equal(2);
    expect(main.stderr()).to.match(/JOB_GPU_TOLERATIONS: must be JSON/);
  });
});
