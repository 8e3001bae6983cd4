// A real Kubernetes control plane for tests: etcd, kube-apiserver (TLS, RBAC, ServiceAccount
// tokens), kube-controller-manager and kube-scheduler, built from the Go module proxy by
// hack/kubernetes/build.sh (hack/test.sh puts their folder in KUBE_BIN_DIR), each started on
// free loopback ports with certificates made for the run. No kubelet runs: test/support/kube-node.ts
// plays the node.
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent, request } from 'node:https';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { eventually } from '../../hack/fixtures/wait.ts';
import { testRunDirectory } from './test-run.ts';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The programs, from the folder hack/test.sh built them into. */
export function kubeBinDir(): string {
  const dir = process.env.KUBE_BIN_DIR;
  if (!dir || !existsSync(join(dir, 'kube-apiserver'))) {
    throw new Error('KUBE_BIN_DIR does not name the Kubernetes programs: run the tests through hack/test.sh, or set it to the folder hack/kubernetes/build.sh prints');
  }
  return dir;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

interface Credentials { caData: string; certData: string; keyData: string }

/** A CA, the API server's serving certificate, an admin client certificate and the ServiceAccount signing key. */
async function makeCertificates(dir: string): Promise<Credentials> {
  const file = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', ['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '7', '-subj', '/CN=cutroom-test-ca',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const signed = async (name: string, subject: string, extensions: string) => {
    await run('openssl', ['req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject]);
    await writeFile(file(`${name}.ext`), extensions);
    await run('openssl', ['x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial',
      '-days', '7', '-out', file(`${name}.crt`), '-extfile', file(`${name}.ext`)]);
  };
  await signed('apiserver', '/CN=kube-apiserver', [
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
    'extendedKeyUsage=serverAuth', 'keyUsage=critical,digitalSignature,keyEncipherment', '',
  ].join('\n'));
  // system:masters: the cluster's own administrators (the tests, the controllers' bootstrap, the node agent).
  await signed('admin', '/O=system:masters/CN=cutroom-test-admin', ['extendedKeyUsage=clientAuth', 'keyUsage=critical,digitalSignature,keyEncipherment', ''].join('\n'));
  await run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('sa.key')]);
  await run('openssl', ['ec', '-in', file('sa.key'), '-pubout', '-out', file('sa.pub')]);
  const base64 = async (name: string) => (await readFile(file(name))).toString('base64');
  return { caData: await base64('ca.crt'), certData: await base64('admin.crt'), keyData: await base64('admin.key') };
}

/** A kubeconfig document for `server`: the admin's client certificate, or a bearer token. */
function kubeconfigDocument(server: string, caData: string, user: { certData: string; keyData: string } | { token: string }, namespace = 'default') {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cutroom-test', cluster: { server, 'certificate-authority-data': caData } }],
    users: [{ name: 'user', user: 'token' in user ? { token: user.token } : { 'client-certificate-data': user.certData, 'client-key-data': user.keyData } }],
    contexts: [{ name: 'cutroom-test', context: { cluster: 'cutroom-test', user: 'user', namespace } }],
    'current-context': 'cutroom-test',
  };
}

interface Program { name: string; child: ChildProcess; args: string[] }

export interface CommandResult { code: number; stdout: string; stderr: string }

export interface KubeCluster {
  /** The API server's address (https on loopback). */
  url: string;
  dir: string;
  binDir: string;
  /** The admin's kubeconfig file (system:masters), for kubectl and helm. */
  kubeconfigPath: string;
  /** A client configuration as the admin, or (with a token) as whoever the token names. */
  kubeConfig(namespace?: string, token?: string): KubeConfig;
  /** Writes a kubeconfig file for a token (a ServiceAccount's, say) and returns its path. */
  kubeconfigFile(token: string, namespace?: string): Promise<string>;
  /** kubectl or helm, as the admin unless `kubeconfig` says otherwise; never throws on a non-zero exit. */
  kubectl(args: string[], options?: { input?: string; kubeconfig?: string }): Promise<CommandResult>;
  helm(args: string[], options?: { kubeconfig?: string }): Promise<CommandResult>;
  /**
   * Kills the API server (SIGKILL: its graceful shutdown waits a minute for long requests to
   * drain) and starts it again on the same port and data; etcd keeps running.
   */
  restartApiServer(): Promise<void>;
  close(): Promise<void>;
}

let shared: Promise<KubeCluster> | undefined;

/** This process's control plane, started on first use and stopped when the process exits. */
export function kubeCluster(): Promise<KubeCluster> {
  shared ??= startKubeCluster();
  return shared;
}

export async function startKubeCluster(): Promise<KubeCluster> {
  const binDir = kubeBinDir();
  const dir = join(testRunDirectory, `kube-${process.pid}-${Date.now().toString(36)}`);
  await mkdir(join(dir, 'logs'), { recursive: true });
  const credentials = await makeCertificates(dir);
  const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
  const url = `https://127.0.0.1:${apiPort}`;
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  await writeFile(kubeconfigPath, stringify(kubeconfigDocument(url, credentials.caData, credentials)));

  const programs: Program[] = [];
  // setpriv --pdeathsig: a worker that is stopped without its teardown takes its control plane with it.
  const start = (name: string, args: string[]): Program => {
    const log = createWriteStream(join(dir, 'logs', `${name}.log`), { flags: 'a' });
    const child = spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', join(binDir, name), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    const program = { name, child, args };
    programs.push(program);
    return program;
  };
  const file = (name: string) => join(dir, name);

  start('etcd', [
    '--name=cutroom-test', `--data-dir=${file('etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdClient}`, `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`, `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-cluster=cutroom-test=http://127.0.0.1:${etcdPeer}`,
    // A test cluster's data need not survive a power cut: fsync would cost every write milliseconds.
    '--unsafe-no-fsync', '--log-level=warn',
  ]);
  const apiServerArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${apiPort}`,
    `--tls-cert-file=${file('apiserver.crt')}`, `--tls-private-key-file=${file('apiserver.key')}`,
    `--client-ca-file=${file('ca.crt')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${file('sa.pub')}`, `--service-account-signing-key-file=${file('sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/16',
    // The `kubernetes` Service's endpoints would be this loopback address, which Endpoints refuse.
    '--endpoint-reconciler-type=none',
    '--v=1',
  ];
  const apiServer = { current: start('kube-apiserver', apiServerArgs) };
  const admin = new Agent({ ca: Buffer.from(credentials.caData, 'base64'), cert: Buffer.from(credentials.certData, 'base64'), key: Buffer.from(credentials.keyData, 'base64'), keepAlive: false });
  const answers = (path: string) => new Promise<number>((resolve) => {
    request(`${url}${path}`, { agent: admin }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', () => resolve(0)).end();
  });
  const ready = (path: string) => eventually(async () => ((await answers(path)) === 200 ? true : undefined), `the API server's ${path}`, 60_000, 200);
  const exited = (program: Program) => new Promise<never>((_resolve, reject) => {
    program.child.once('exit', (code) => reject(new Error(`${program.name} exited (${code}) while starting; its log: ${join(dir, 'logs', `${program.name}.log`)}`)));
  });
  await Promise.race([ready('/readyz'), ...programs.map(exited)]);

  start('kube-controller-manager', [
    `--kubeconfig=${kubeconfigPath}`, '--secure-port=0', '--leader-elect=false',
    `--service-account-private-key-file=${file('sa.key')}`, `--root-ca-file=${file('ca.crt')}`,
    '--use-service-account-credentials=true',
    // Pods of deleted owners are collected within seconds, as on a cluster; nothing else differs from the defaults.
    '--v=1',
  ]);
  start('kube-scheduler', [`--kubeconfig=${kubeconfigPath}`, '--secure-port=0', '--leader-elect=false', '--v=1']);

  const kubeConfig = (namespace = 'default', token?: string) => {
    const kc = new KubeConfig();
    kc.loadFromString(JSON.stringify(kubeconfigDocument(url, credentials.caData, token ? { token } : credentials, namespace)));
    return kc;
  };
  const command = async (program: string, args: string[], kubeconfig: string, input?: string): Promise<CommandResult> => {
    const child = spawn(join(binDir, program), args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.stdin.end(input ?? '');
    const [code] = (await once(child, 'close')) as [number | null];
    return { code: code ?? 1, stdout, stderr };
  };

  const cluster: KubeCluster = {
    url,
    dir,
    binDir,
    kubeconfigPath,
    kubeConfig,
    async kubeconfigFile(token, namespace = 'default') {
      const path = join(dir, `token-${Math.random().toString(36).slice(2)}.kubeconfig`);
      await writeFile(path, stringify(kubeconfigDocument(url, credentials.caData, { token }, namespace)));
      return path;
    },
    kubectl: (args, options = {}) => command('kubectl', args, options.kubeconfig ?? kubeconfigPath, options.input),
    helm: (args, options = {}) => command('helm', args, options.kubeconfig ?? kubeconfigPath),
    async restartApiServer() {
      const old = apiServer.current;
      old.child.kill('SIGKILL');
      if (old.child.exitCode === null && old.child.signalCode === null) await once(old.child, 'exit');
      programs.splice(programs.indexOf(old), 1);
      apiServer.current = start('kube-apiserver', apiServerArgs);
      await Promise.race([ready('/readyz'), exited(apiServer.current)]);
    },
    async close() {
      for (const program of [...programs].reverse()) {
        if (program.child.exitCode !== null) continue;
        program.child.kill('SIGTERM');
        await once(program.child, 'exit');
      }
      admin.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
  process.once('exit', () => {
    for (const program of programs) program.child.kill('SIGKILL');
  });
  return cluster;
}

const applied = new WeakMap<KubeCluster, Promise<void>>();
/** crds/ applied with kubectl, once each is Established (once per cluster and process). */
export function applyCrds(cluster: KubeCluster): Promise<void> {
  let done = applied.get(cluster);
  if (!done) {
    done = applyCrdsNow(cluster);
    applied.set(cluster, done);
  }
  return done;
}

async function applyCrdsNow(cluster: KubeCluster): Promise<void> {
  const applied = await cluster.kubectl(['apply', '-f', join(repoRoot, 'crds')]);
  if (applied.code !== 0) throw new Error(`kubectl apply -f crds/ failed: ${applied.stderr}`);
  const established = await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', join(repoRoot, 'crds')]);
  if (established.code !== 0) throw new Error(`the CRDs were not established: ${established.stderr}`);
}

let namespaces = 0;
/** A namespace of its own for a test, once its default ServiceAccount exists (Pods need one). */
export async function testNamespace(cluster: KubeCluster, prefix: string): Promise<string> {
  const name = `${prefix}-${process.pid}-${++namespaces}`;
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name } } });
  await eventually(async () => (await core.readNamespacedServiceAccount({ name: 'default', namespace: name }).catch(() => undefined)) && true, `the default ServiceAccount of ${name}`, 30_000, 100);
  return name;
}

/**
 * A namespace of this process's control plane, the CRDs applied, and a client configuration for
 * it: where an api with the kubernetes backend creates job resources and no operator runs.
 */
export async function resourceNamespace(prefix: string): Promise<{ namespace: string; kubeConfig: KubeConfig }> {
  const cluster = await kubeCluster();
  await applyCrds(cluster);
  const namespace = await testNamespace(cluster, prefix);
  return { namespace, kubeConfig: cluster.kubeConfig(namespace) };
}
