import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { JobLog } from '../../job-images/lib/job-log.ts';
import {
  customResourceStatusPatcher,
  kubernetesProgressReporter,
  progressReporterFromEnv,
  progressSlice,
  stdoutProgressReporter,
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
      const reporter = stdoutProgressReporter((line) => lines.push(line));
      reporter.report('download', 12.6);
      expect(lines).to.deep.equal(['{"event":"progress","step":"download","progress":13}\n']);
    });

    it('repeats are dropped and progress never goes backwards', () => {
      const lines: string[] = [];
      const reporter = stdoutProgressReporter((line) => lines.push(line));
      reporter.report('download', 10);
      reporter.report('download', 10.2);
      reporter.report('probe', 5);
      reporter.report('process', 140);
      expect(lines.map((line) => JSON.parse(line))).to.deep.equal([
        { event: 'progress', step: 'download', progress: 10 },
        { event: 'progress', step: 'probe', progress: 10 },
        { event: 'progress', step: 'process', progress: 100 },
      ]);
    });

    it('a step slice maps its own 0..1 onto its share of the job', () => {
      const lines: string[] = [];
      const slice = progressSlice(stdoutProgressReporter((line) => lines.push(line)), 'process', 25, 90);
      slice(0.5);
      slice(2);
      expect(lines.map((line) => JSON.parse(line).progress)).to.deep.equal([58, 90]);
    });
  });

  describe('kubernetes', () => {
    let endpoint: Awaited<ReturnType<typeof startStatusEndpoint>>;
    afterEach(() => endpoint?.server.close());

    it('merge-patches status.progress and status.step of the custom resource status subresource', async () => {
      endpoint = await startStatusEndpoint();
      const reporter = kubernetesProgressReporter(await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource), recordingLog());
      reporter.report('download', 5);
      await reporter.flush();
      expect(endpoint.patches).to.have.length(1);
      expect(endpoint.patches[0]).to.include({
        method: 'PATCH',
        path: '/apis/cutroom.dev/v1alpha1/namespaces/media/artifactjobs/art-1/status',
        contentType: 'application/merge-patch+json',
      });
      expect(endpoint.patches[0]?.body).to.deep.equal({ status: { step: 'download', progress: 5 } });
    });

    it('at most one patch per interval, and the latest value wins', async () => {
      endpoint = await startStatusEndpoint();
      const patcher = await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource);
      const reporter = kubernetesProgressReporter(patcher, recordingLog(), 300);
      for (let percent = 1; percent <= 50; percent += 1) {
        reporter.report('process', percent);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await reporter.flush();
      const bodies = endpoint.patches.map((patch) => patch.body as { status: { progress: number } });
      expect(bodies.length).to.be.within(2, 4);
      expect(bodies.at(-1)).to.deep.equal({ status: { step: 'process', progress: 50 } });
      const gaps = endpoint.patches.slice(1).map((patch, index) => patch.at - endpoint.patches[index]!.at);
      for (const gap of gaps.slice(0, -1)) expect(gap).to.be.at.least(250);
    });

    it('a failing patch is logged, never thrown', async () => {
      endpoint = await startStatusEndpoint(500);
      const log = recordingLog();
      const reporter = kubernetesProgressReporter(await customResourceStatusPatcher(kubeConfigFor(endpoint.url), resource), log);
      reporter.report('download', 1);
      await reporter.flush();
      expect(endpoint.patches).to.have.length(1);
      expect(log.warnings).to.deep.equal(['progress patch failed']);
    });

    it('without the custom resource named in the environment, progress falls back to stdout', async () => {
      const log = recordingLog();
      await progressReporterFromEnv({ CUTROOM_PROGRESS: 'kubernetes', CUTROOM_CR_PLURAL: 'artifactjobs' }, log);
      expect(log.warnings).to.deep.equal(['custom resource not named, reporting progress on stdout']);
    });
  });
});
