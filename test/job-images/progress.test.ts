import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { JobLog } from '../../job-images/lib/job-log.ts';
import { jobPrograms } from '../../crds/contract/programs.ts';
import {
  customResourceStatusPatcher,
  kubernetesProgressSink,
  programProgress,
  progressSinkFromEnv,
  stdoutProgressSink,
  stepFraction,
} from '../../job-images/lib/progress.ts';

interface RecordedPatch {
  method: string;
  path: string;
  contentType: string;
  body: unknown;
  at: number;
}

/** Just the status-subresource PATCH endpoint of a Kubernetes API server, recording what it receives. */
async function startStatusEndpoint(status = 200): Promise<{ server: Server; url: string; patches: RecordedPatch[] }> {
  const patches: RecordedPatch[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (text: string) => (body += text));
    request.on('end', () => {
      patches.push({
        method: request.method ?? '',
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body: JSON.parse(body || 'null'),
        at: Date.now(),
      });
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 200 ? JSON.stringify({ kind: 'ArtifactJob' }) : JSON.stringify({ kind: 'Status', code: status }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, patches };
}

function kubeConfigFor(url: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'test', server: url, skipTLSVerify: true }],
    users: [{ name: 'job', token: 'service-account-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'job' }],
    currentContext: 'test',
  });
  return kubeConfig;
}

function recordingLog(): JobLog & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info: () => {}, warn: (message) => warnings.push(message), error: () => {} };
}

const resource = { group: 'cutroom.dev', version: 'v1alpha1', plural: 'artifactjobs', name: 'art-1', namespace: 'media' };

describe('progress reporting (job-images/lib/progress.ts)', () => {
  describe('stdout', () => {
    it('writes {"event":"progress","step","progress"} lines with integer percentages', () => {
      const lines: string[] = [];
      const sink = stdoutProgressSink((line) => lines.push(line));
      sink.send({ step: 'download', progress: 12.6 });
      expect(lines).to.deep.equal(['{"event":"progress","step":"download","progress":13}\n']);
    });

    it('repeats are dropped and progress never goes backwards', () => {
      const lines: string[] = [];
      const sink = stdoutProgressSink((line) => lines.push(line));
      sink.send({ step: 'download', progress: 10 });
      sink.send({ step: 'download', progress: 10.2 });
      sink.send({ step: 'probe', progress: 5 });
      sink.send({ step: 'process', progress: 140 });
      expect(lines.map((line) => JSON.parse(line) as unknown)).to.deep.equal([
        { event: 'progress', step: 'download', progress: 10 },
        { event: 'progress', step: 'probe', progress: 10 },
        { event: 'progress', step: 'process', progress: 100 },
      ]);
    });

    it("a step's own 0..1 is mapped onto that step's slice of the job, as the program registry gives it", () => {
      expect(jobPrograms.artifact.steps).to.deep.include({ process: [25, 90], upload: [90, 100] });
      const lines: string[] = [];
      const reporter = programProgress('artifact', stdoutProgressSink((line) => lines.push(line)));
      reporter.report('process', 0.5); // 25 + 65 × 0.5 = 57.5
      reporter.report('process', 2); // clamped to the step's end
      const upload = stepFraction(reporter, 'upload');
      upload(0.5);
      upload(1);
      expect(lines.map((line) => JSON.parse(line) as { step: string; progress: number })).to.deep.equal([
        { event: 'progress', step: 'process', progress: 58 },
        { event: 'progress', step: 'process', progress: 90 },
        { event: 'progress', step: 'upload', progress: 95 },
        { event: 'progress', step: 'upload', progress: 100 },
      ]);
    });

    it('eta_seconds is written when the program gives a time left (rounded, never below 0), absent when it does not', () => {
      const lines: string[] = [];
      const reporter = programProgress('render', stdoutProgressSink((line) => lines.push(line)));
      reporter.report('encode', 0.1, 12.4);
      reporter.report('encode', 0.2, -3);
      reporter.report('encode', 0.3);
      reporter.report('encode', 0.4, null);
      expect(lines.map((line) => JSON.parse(line) as unknown)).to.deep.equal([
        { event: 'progress', step: 'encode', progress: 15, eta_seconds: 12 },
        { event: 'progress', step: 'encode', progress: 23, eta_seconds: 0 },
        { event: 'progress', step: 'encode', progress: 31 },
        { event: 'progress', step: 'encode', progress: 39 },
      ]);
    });
  });

  describe('kubernetes', () => {
    let endpoint: Awaited<ReturnType<typeof startStatusEndpoint>>;
    afterEach(() => endpoint?.server.close());

    it('merge-patches status.progress, status.step and status.etaSeconds of the custom resource status subresource', async () => {
      endpoint = await startStatusEndpoint();
      const sink = kubernetesProgressSink(await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource), recordingLog());
      sink.send({ step: 'download', progress: 5 });
      await sink.flush();
      expect(endpoint.patches).to.have.length(1);
      expect(endpoint.patches[0]).to.include({
        method: 'PATCH',
        path: '/apis/cutroom.dev/v1alpha1/namespaces/media/artifactjobs/art-1/status',
        contentType: 'application/merge-patch+json',
      });
      expect(endpoint.patches[0]?.body).to.deep.equal({ status: { step: 'download', progress: 5, etaSeconds: null } });
    });

    it('a time left is patched as status.etaSeconds; a report without one clears it (null)', async () => {
      endpoint = await startStatusEndpoint();
      const sink = kubernetesProgressSink(await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource), recordingLog());
      sink.send({ step: 'encode', progress: 40, etaSeconds: 42 });
      await sink.flush();
      sink.send({ step: 'mux', progress: 93 });
      await sink.flush();
      expect(endpoint.patches.map((patch) => patch.body)).to.deep.equal([
        { status: { step: 'encode', progress: 40, etaSeconds: 42 } },
        { status: { step: 'mux', progress: 93, etaSeconds: null } },
      ]);
    });

    it('at most one patch per interval, and the latest value wins', async () => {
      endpoint = await startStatusEndpoint();
      const patcher = await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource);
      const sink = kubernetesProgressSink(patcher, recordingLog(), 300);
      for (let percent = 1; percent <= 50; percent += 1) {
        sink.send({ step: 'process', progress: percent });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await sink.flush();
      const bodies = endpoint.patches.map((patch) => patch.body as { status: { progress: number } });
      expect(bodies.length).to.be.within(2, 4);
      expect(bodies.at(-1)).to.deep.equal({ status: { step: 'process', progress: 50, etaSeconds: null } });
      const gaps = endpoint.patches.slice(1).map((patch, index) => patch.at - endpoint.patches[index]!.at);
      for (const gap of gaps.slice(0, -1)) expect(gap).to.be.at.least(250);
    });

    it('a failing patch is logged, never thrown', async () => {
      endpoint = await startStatusEndpoint(500);
      const log = recordingLog();
      const sink = kubernetesProgressSink(await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource), log);
      sink.send({ step: 'download', progress: 1 });
      await sink.flush();
      expect(endpoint.patches).to.have.length(1);
      expect(log.warnings).to.deep.equal(['progress patch failed']);
    });

    it('without the custom resource named in the environment, progress falls back to stdout', async () => {
      const log = recordingLog();
      const lines: string[] = [];
      const sink = await progressSinkFromEnv({ CUTROOM_PROGRESS: 'kubernetes', CUTROOM_CR_PLURAL: 'artifactjobs' }, log, (line) => lines.push(line));
      expect(log.warnings).to.deep.equal(['custom resource not named, reporting progress on stdout']);
      sink.send({ step: 'download', progress: 3 });
      expect(lines).to.deep.equal(['{"event":"progress","step":"download","progress":3}\n']);
    });
  });
});
