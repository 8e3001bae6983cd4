// The simulator's kubelet for a chaos campaign: every batch Job that appears in the
// namespace gets its pod, which runs the Job's real program (runJobPod), a few at a time.
// It lives in the test process, so pods keep running and finishing while the operator that
// made their Jobs is dead, as on a cluster.
import type { V1Job } from '@kubernetes/client-node';
import type { KubeSim } from '../kube-sim/index.ts';
import { runJobPod } from '../operator/operator-support.ts';

export interface Kubelet {
  /** Pods run to their end, by exit code. */
  readonly exits: Map<string, number>;
  /** Pods that could not be run (the Job vanished, the program could not start). */
  readonly errors: string[];
  stop(): Promise<void>;
}

/**
 * runJobPod brings the S3 settings of the Job's envFrom; the Whisper address, which the job
 * ConfigMap holds too, is added to the Job's container here, so analyses reach the run's server.
 */
async function withConfigMapEnv(sim: KubeSim, namespace: string, jobName: string): Promise<void> {
  const job = sim.get('jobs', namespace, jobName) as V1Job | undefined;
  const containers = job?.spec?.template.spec?.containers;
  if (!containers || !process.env.WHISPER_BASE_URL) return;
  const env = (container: (typeof containers)[number]) => [...(container.env ?? []).filter((entry) => entry.name !== 'WHISPER_BASE_URL'), { name: 'WHISPER_BASE_URL', value: process.env.WHISPER_BASE_URL! }];
  sim.mergePatch('jobs', namespace, jobName, { spec: { template: { spec: { containers: containers.map((container) => ({ ...container, env: env(container) })) } } } });
}

export function startKubelet(sim: KubeSim, namespace: string, concurrency: number): Kubelet {
  const seen = new Set<string>();
  const waiting: string[] = [];
  const running = new Set<Promise<void>>();
  const exits = new Map<string, number>();
  const errors: string[] = [];
  let stopped = false;

  const fill = () => {
    while (!stopped && running.size < concurrency && waiting.length > 0) {
      const jobName = waiting.shift()!;
      const pod: Promise<void> = withConfigMapEnv(sim, namespace, jobName)
        .then(() => runJobPod(sim, namespace, jobName))
        .then((run) => void exits.set(String(run.exitCode), (exits.get(String(run.exitCode)) ?? 0) + 1))
        .catch((error: unknown) => void errors.push(`${jobName}: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          running.delete(pod);
          fill();
        });
      running.add(pod);
    }
  };
  const timer = setInterval(() => {
    for (const job of sim.list('jobs', namespace)) {
      const name = job.metadata.name!;
      if (seen.has(name)) continue;
      seen.add(name);
      waiting.push(name);
    }
    fill();
  }, 100);

  return {
    exits,
    errors,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([...running]);
    },
  };
}
