// Valid custom resource bodies and a reader for API errors, shared by the simulator's tests.
import { randomUUID } from 'node:crypto';
import { ApiException } from '@kubernetes/client-node';
import { cutroomApiVersion } from '../../crds/contract/resources.ts';
import type { JobKind, JobSpec } from '../../crds/contract/resources.ts';
import type { KubeStatus } from './status-error.ts';

export function sampleSpec(overrides: Partial<JobSpec> = {}): JobSpec {
  return {
    jobId: randomUUID(),
    program: 'render',
    userId: randomUUID(),
    projectId: randomUUID(),
    input: { timeline: { clips: [{ start: 0, end: 1.5 }] } },
    outputPrefix: 'exports/abc/',
    ...overrides,
  };
}

export function jobResourceBody(
  kind: JobKind,
  name: string,
  spec: object = sampleSpec(),
  labels: Record<string, string> = {},
) {
  return { apiVersion: cutroomApiVersion, kind, metadata: { name, labels }, spec };
}

// The Status an ApiException carries, after checking its HTTP code.
export async function apiStatus(call: Promise<unknown>, code: number): Promise<KubeStatus> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    if (error.code !== code) throw new Error(`expected HTTP ${code}, got ${error.code}: ${String(error.body)}`);
    return JSON.parse(String(error.body)) as KubeStatus;
  }
  throw new Error(`expected HTTP ${code}, but the call succeeded`);
}
