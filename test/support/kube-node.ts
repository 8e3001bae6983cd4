// A node for the test control plane (test/support/kube-cluster.ts), in place of a kubelet:
// registers a Node and keeps its Lease, and runs each Pod the scheduler binds to it — the
// container's own command, with the Pod's environment (env, envFrom, the downward API), its
// ServiceAccount token (a TokenRequest bound to the Pod), its emptyDirs and its user, through
// pod-runtime.sh — then reports the Pod's phase and the container's exit code and termination
// message, as a kubelet does. A Pod deleted while running is stopped (SIGTERM, then SIGKILL
// after its grace period) and its deletion completed.
//
// What it does not do: pull images (the command runs from the repository, which stands for
// every image), limit CPU or memory, restart containers, run init or sidecar containers, serve
// logs or exec, or give Pods a network of their own.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiException, CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import type { V1Container, V1EnvVar, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { KubeCluster } from './kube-cluster.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const runtime = fileURLToPath(new URL('./pod-runtime.sh', import.meta.url));
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** What a kubelet keeps of a failed container's log for its message (FallbackToLogsOnError). */
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;

export interface KubeNode {
  name: string;
  /**
   * The Pods of a namespace are held, not run: the test plays their containers with `play`
   * (when its program's part is played by the test, as a kubelet's report would read).
   */
  hold(namespace: string): void;
  /** The held Pods of a namespace that the API server still has, by Job name. */
  held(namespace: string, jobName: string): Promise<V1Pod[]>;
  /** Reports a held Pod's container running, or ended with this exit code, message and reason (default Completed or Error). */
  play(pod: V1Pod, as: 'running' | { exitCode: number; message?: string; reason?: string }): Promise<void>;
  stop(): Promise<void>;
}

interface RunningPod {
  child: ChildProcess;
  killed: boolean;
  output: Buffer[];
  /** Settles once the container's end is reported on the Pod. */
  reported: Promise<void>;
}

const readable = new Map<string, boolean>();
/** Whether a user can run this Node and read the repository, as the images' files are readable by their user. */
function canReadRepository(user: number, group: number): boolean {
  const key = `${user}:${group}`;
  if (!readable.has(key)) {
    const check = spawnSync('setpriv', [`--reuid=${user}`, `--regid=${group}`, '--clear-groups', '--', 'test', '-x', process.execPath, '-a', '-r', join(repoRoot, 'package.json')]);
    readable.set(key, check.status === 0);
    if (check.status !== 0) console.warn(`kube-node: uid ${user} cannot read ${repoRoot}; Pods asking for that user run as root`);
  }
  return readable.get(key)!;
}

/** Signals every process of a container: its command leads a process group of its own (detached). */
function signalContainer(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

function envValue(entry: V1EnvVar, pod: V1Pod, lookups: Map<string, Record<string, string>>): string | undefined {
  if (entry.value !== undefined) return entry.value;
  const from = entry.valueFrom;
  if (!from) return '';
  if (from.fieldRef) {
    const fields: Record<string, string | undefined> = {
      'metadata.name': pod.metadata?.name,
      'metadata.namespace': pod.metadata?.namespace,
      'metadata.uid': pod.metadata?.uid,
      'spec.nodeName': pod.spec?.nodeName,
      'spec.serviceAccountName': pod.spec?.serviceAccountName,
      'status.podIP': '127.0.0.1',
      'status.hostIP': '127.0.0.1',
    };
    const label = /^metadata\.labels\['(.+)'\]$/.exec(from.fieldRef.fieldPath);
    return label ? pod.metadata?.labels?.[label[1]!] : fields[from.fieldRef.fieldPath];
  }
  const ref = from.configMapKeyRef ?? from.secretKeyRef;
  if (ref) return lookups.get(`${from.configMapKeyRef ? 'cm' : 'secret'}/${ref.name}`)?.[ref.key];
  return undefined;
}

/** A Pod's status once its container runs, as a kubelet reports it. */
function runningStatus(container: V1Container, startedAt: Date): V1PodStatus {
  return {
    phase: 'Running',
    hostIP: '127.0.0.1',
    podIP: '127.0.0.1',
    podIPs: [{ ip: '127.0.0.1' }],
    startTime: startedAt,
    conditions: [
      { type: 'Initialized', status: 'True', lastTransitionTime: startedAt },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: startedAt },
      { type: 'Ready', status: 'True', lastTransitionTime: startedAt },
    ],
    containerStatuses: [{ name: container.name, image: container.image ?? '', imageID: '', ready: true, started: true, restartCount: 0, state: { running: { startedAt } } }],
  };
}

/** A Pod's status once its container ended with this exit code and termination message. */
function endedStatus(container: V1Container, exitCode: number, message: string, startedAt: Date, finishedAt: Date, reason = exitCode === 0 ? 'Completed' : 'Error'): V1PodStatus {
  return {
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    conditions: [
      { type: 'ContainersReady', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
      { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: finishedAt },
    ],
    containerStatuses: [{
      name: container.name, image: container.image ?? '', imageID: '', ready: false, started: false, restartCount: 0,
      state: { terminated: { exitCode, reason, ...(message ? { message } : {}), startedAt, finishedAt } },
    }],
  };
}

export async function startKubeNode(cluster: KubeCluster, name = `node-${process.pid}`): Promise<KubeNode> {
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const running = new Map<string, RunningPod>();
  const seen = new Set<string>();
  let stopped = false;

  const capacity = { cpu: '16', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' };
  const now = () => new Date();
  await core.createNode({
    body: {
      metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } },
      spec: {},
    },
  });
  const nodeStatus = () => ({
    status: {
      capacity,
      allocatable: capacity,
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: name }],
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'the test node agent is running', lastHeartbeatTime: now(), lastTransitionTime: now() }],
      nodeInfo: {
        architecture: 'amd64', operatingSystem: 'linux', osImage: 'test node agent', kernelVersion: '', kubeletVersion: 'v0.0.0-test',
        kubeProxyVersion: '', containerRuntimeVersion: 'pod-runtime.sh', bootID: '', machineID: '', systemUUID: '',
      },
    },
  });
  await core.patchNodeStatus({ name, body: nodeStatus() }, mergePatch);
  await coordination.createNamespacedLease({
    namespace: 'kube-node-lease',
    body: { metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new V1MicroTime() } },
  });

  /** Reports a Pod's status until the API server takes it (it may be restarting) or the Pod is gone. */
  const patchStatus = async (pod: V1Pod, status: V1PodStatus) => {
    const deadline = Date.now() + 120_000;
    while (!stopped) {
      try {
        await core.patchNamespacedPodStatus({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { status } }, mergePatch);
        return;
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return;
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };

  const lookupsFor = async (pod: V1Pod, container: V1Container) => {
    const lookups = new Map<string, Record<string, string>>();
    const namespace = pod.metadata!.namespace!;
    const wanted = new Set<string>();
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef) wanted.add(`cm/${from.configMapRef.name}`);
      if (from.secretRef) wanted.add(`secret/${from.secretRef.name}`);
    }
    for (const entry of container.env ?? []) {
      if (entry.valueFrom?.configMapKeyRef) wanted.add(`cm/${entry.valueFrom.configMapKeyRef.name}`);
      if (entry.valueFrom?.secretKeyRef) wanted.add(`secret/${entry.valueFrom.secretKeyRef.name}`);
    }
    for (const key of wanted) {
      const [kind, refName] = key.split('/') as ['cm' | 'secret', string];
      try {
        if (kind === 'cm') lookups.set(key, (await core.readNamespacedConfigMap({ name: refName, namespace })).data ?? {});
        else {
          const data = (await core.readNamespacedSecret({ name: refName, namespace })).data ?? {};
          lookups.set(key, Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])));
        }
      } catch {
        // Missing: an optional reference leaves nothing; a required one fails the container below.
      }
    }
    return lookups;
  };

  /** The container's environment as a kubelet makes it, or why it cannot be made. */
  const environmentOf = (pod: V1Pod, container: V1Container, lookups: Map<string, Record<string, string>>): Record<string, string> | string => {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      const ref = from.configMapRef ?? from.secretRef;
      const values = lookups.get(`${from.configMapRef ? 'cm' : 'secret'}/${ref?.name}`);
      if (!values) {
        if (ref?.optional) continue;
        return `${from.configMapRef ? 'configmap' : 'secret'} "${ref?.name}" not found`;
      }
      for (const [key, value] of Object.entries(values)) env[`${from.prefix ?? ''}${key}`] = value;
    }
    for (const entry of container.env ?? []) {
      const value = envValue(entry, pod, lookups);
      if (value === undefined) {
        const ref = entry.valueFrom?.configMapKeyRef ?? entry.valueFrom?.secretKeyRef;
        if (ref?.optional) continue;
        return `couldn't find key ${ref?.key ?? entry.name} for ${entry.name}`;
      }
      env[entry.name] = value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, ref: string) => env[ref] ?? whole);
    }
    return env;
  };

  const start = async (pod: V1Pod) => {
    const uid = pod.metadata!.uid!;
    const spec = pod.spec!;
    const container = spec.containers[0]!;
    const startedAt = now();
    const dir = join(cluster.dir, 'pods', uid);
    const asked = {
      user: container.securityContext?.runAsUser ?? spec.securityContext?.runAsUser ?? 0,
      group: container.securityContext?.runAsGroup ?? spec.securityContext?.runAsGroup ?? 0,
    };
    // The repository stands for a Node image: where the Pod's user cannot read it (a checkout in
    // a private folder), such a command runs as root rather than fail for a reason no cluster has.
    const fromRepository = container.command?.[0] === 'node';
    const { user: userId, group: groupId } = !fromRepository || canReadRepository(asked.user, asked.group) ? asked : { user: 0, group: 0 };
    const fsGroup = spec.securityContext?.fsGroup ?? groupId;
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'termination-log'), '');
    await chown(join(dir, 'termination-log'), userId, groupId);
    const mounts: string[] = [];
    for (const mount of container.volumeMounts ?? []) {
      const volume = spec.volumes?.find((v) => v.name === mount.name);
      if (volume?.emptyDir) {
        const source = join('volumes', volume.name);
        await mkdir(join(dir, source), { recursive: true });
        await chown(join(dir, source), 0, fsGroup);
        await chmod(join(dir, source), 0o2775);
        mounts.push(`${source} ${mount.mountPath}`);
      }
    }
    await writeFile(join(dir, 'mounts'), `${mounts.join('\n')}\n`);

    const waiting = (reason: string, message: string): Promise<void> => patchStatus(pod, {
      phase: 'Failed',
      containerStatuses: [{ name: container.name, image: container.image ?? '', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } } }],
    });
    const environment = environmentOf(pod, container, await lookupsFor(pod, container));
    if (typeof environment === 'string') return waiting('CreateContainerConfigError', environment);

    if (spec.automountServiceAccountToken !== false && spec.serviceAccountName) {
      const token = await core.createNamespacedServiceAccountToken({
        name: spec.serviceAccountName,
        namespace: pod.metadata!.namespace!,
        body: { spec: { audiences: [], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata!.name!, uid } } },
      });
      await mkdir(join(dir, 'serviceaccount'), { recursive: true });
      await writeFile(join(dir, 'serviceaccount', 'token'), token.status?.token ?? '', { mode: 0o644 });
      await writeFile(join(dir, 'serviceaccount', 'namespace'), pod.metadata!.namespace!, { mode: 0o644 });
      await writeFile(join(dir, 'serviceaccount', 'ca.crt'), await readFile(join(cluster.dir, 'ca.crt')), { mode: 0o644 });
    }
    const apiPort = new URL(cluster.url).port;
    const [program, ...args] = [...(container.command ?? []), ...(container.args ?? [])];
    if (!program) return waiting('CreateContainerError', 'the container has no command');
    // `node` is the Node of this run, as the images' Node is the one the repository pins.
    const executable = program === 'node' ? process.execPath : program;
    const child = spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', 'unshare', '--mount', '--propagation', 'private', '--',
      'bash', runtime, dir, String(userId), String(groupId), container.terminationMessagePath ?? '/dev/termination-log', repoRoot, '--', executable, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: '/',
        HOSTNAME: pod.metadata!.name!,
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: apiPort,
        ...environment,
      },
    });
    // Listened for at once: a quick command may end before its Running status is written. When
    // the command ends, whatever it left running in its container goes too, as a runtime ends a
    // container with its first process.
    const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once('exit', (code, signal) => {
        signalContainer(child, 'SIGKILL');
        child.once('close', () => resolve([code, signal]));
      });
    });
    let report!: () => void;
    const entry: RunningPod = { child, killed: false, output: [], reported: new Promise<void>((resolve) => { report = resolve; }) };
    running.set(uid, entry);
    const keep = (chunk: Buffer) => {
      entry.output.push(chunk);
      while (entry.output.length > 200) entry.output.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    await patchStatus(pod, runningStatus(container, startedAt));
    const [code, signal] = await ended;
    const exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
    let message = (await readFile(join(dir, 'termination-log'), 'utf8').catch(() => '')).slice(0, 4096);
    if (!message && exitCode !== 0 && container.terminationMessagePolicy === 'FallbackToLogsOnError') {
      message = Buffer.concat(entry.output).toString('utf8').split('\n').slice(-FALLBACK_LOG_LINES).join('\n').slice(-FALLBACK_LOG_BYTES);
    }
    const finishedAt = now();
    await rm(dir, { recursive: true, force: true });
    await patchStatus(pod, endedStatus(container, exitCode, message, startedAt, finishedAt));
    running.delete(uid);
    report();
  };

  /** A Pod being deleted: its process stopped, then its deletion completed (grace period 0), as a kubelet confirms it. */
  const stop = async (pod: V1Pod) => {
    const uid = pod.metadata!.uid!;
    const container = running.get(uid);
    if (container && !container.killed) {
      container.killed = true;
      signalContainer(container.child, 'SIGTERM');
      const grace = (pod.metadata!.deletionGracePeriodSeconds ?? 30) * 1000;
      const timer = setTimeout(() => signalContainer(container.child, 'SIGKILL'), Math.min(grace, 10_000));
      await container.reported;
      clearTimeout(timer);
    }
    try {
      await core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { gracePeriodSeconds: 0, preconditions: { uid } } });
    } catch {
      // Already gone.
    }
  };

  // The Pods bound here, polled: a loop that outlives an API server restart with no watch to resume.
  const stopping = new Set<string>();
  const holding = new Set<string>();
  const poll = async () => {
    while (!stopped) {
      try {
        const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${name}` });
        for (const pod of pods.items) {
          const uid = pod.metadata!.uid!;
          if (pod.metadata!.deletionTimestamp) {
            if (!stopping.has(uid)) {
              stopping.add(uid);
              void stop(pod).finally(() => stopping.delete(uid));
            }
          } else if (!seen.has(uid) && !pod.status?.phase?.match(/^(Succeeded|Failed)$/) && !holding.has(pod.metadata!.namespace!)) {
            seen.add(uid);
            void start(pod).catch((error: unknown) => patchStatus(pod, { phase: 'Failed', message: error instanceof Error ? error.message : String(error), reason: 'NodeAgentError' }));
          }
        }
      } catch {
        // The API server is away (restarting, say): try again.
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  };
  const heartbeat = async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      try {
        await coordination.patchNamespacedLease({ name, namespace: 'kube-node-lease', body: { spec: { renewTime: new V1MicroTime() } } }, mergePatch);
      } catch {
        // The next beat tries again.
      }
    }
  };
  const loops = [poll(), heartbeat()];

  const playedSince = new Map<string, Date>();
  return {
    name,
    hold: (namespace) => holding.add(namespace),
    async held(namespace, jobName) {
      return (await core.listNamespacedPod({ namespace, labelSelector: `job-name=${jobName}`, fieldSelector: `spec.nodeName=${name}` })).items;
    },
    async play(pod, as) {
      const container = pod.spec!.containers[0]!;
      const uid = pod.metadata!.uid!;
      if (as === 'running') {
        playedSince.set(uid, now());
        return patchStatus(pod, runningStatus(container, playedSince.get(uid)!));
      }
      return patchStatus(pod, endedStatus(container, as.exitCode, as.message ?? '', playedSince.get(uid) ?? now(), now(), as.reason));
    },
    async stop() {
      stopped = true;
      for (const entry of running.values()) signalContainer(entry.child, 'SIGKILL');
      await Promise.all(loops);
      try {
        await core.deleteNode({ name });
      } catch {
        // The control plane went first.
      }
    },
  };
}

const shared = new WeakMap<KubeCluster, Promise<KubeNode>>();
/** The cluster's one node agent in this process, started on first use. */
export function kubeNode(cluster: KubeCluster): Promise<KubeNode> {
  let node = shared.get(cluster);
  if (!node) {
    node = startKubeNode(cluster);
    shared.set(cluster, node);
  }
  return node;
}
