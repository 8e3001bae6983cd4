import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError } from '../../api/src/config.ts';
import { loadOperatorConfig, operatorConfigSchema } from '../../operator/src/config.ts';
import { repoRoot } from './operator-support.ts';

const images = { JOB_IMAGE_FFMPEG: 'cutroom/job-ffmpeg:1', JOB_IMAGE_WHISPER: 'cutroom/job-whisper:1' };

/** The names in the table under "## Operator environment contract" in docs/deploy.md. */
function contractNames(): string[] {
  const doc = readFileSync(join(repoRoot, 'docs', 'deploy.md'), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith('Operator environment contract')) ?? '';
  return [...section.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((match) => match[1]!);
}

describe('operator configuration', () => {
  it('reads every variable of the operator environment contract in docs/deploy.md, by that name', () => {
    const names = contractNames();
    expect(names).to.have.length.greaterThan(10);
    expect(Object.keys(operatorConfigSchema.shape)).to.include.members(names);
  });

  it('parses the values the chart renders: decimal strings and JSON node selector and tolerations', () => {
    const config = loadOperatorConfig({
      ...images,
      KUBE_NAMESPACE: 'media',
      POD_NAME: 'cutroom-operator-7d9f-abcde',
      OPERATOR_LEASE_NAME: 'prod-cutroom-operator',
      OPERATOR_METRICS_PORT: '9090',
      JOB_GPU_COUNT: '2',
      JOB_GPU_NODE_SELECTOR: '{"nvidia.com/gpu.present":"true"}',
      JOB_GPU_TOLERATIONS: '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
      JOB_BACKOFF_LIMIT: '0',
      JOB_TIMEOUT_SECONDS: '1800',
      JOB_TTL_SECONDS_AFTER_FINISHED: '60',
      JOB_ENV_CONFIGMAP: 'prod-cutroom',
      JOB_ENV_SECRET: 'cutroom-credentials',
    });
    expect(config).to.include({
      KUBE_NAMESPACE: 'media',
      POD_NAME: 'cutroom-operator-7d9f-abcde',
      OPERATOR_LEASE_NAME: 'prod-cutroom-operator',
      OPERATOR_METRICS_PORT: 9090,
      JOB_GPU_COUNT: 2,
      JOB_BACKOFF_LIMIT: 0,
      JOB_TIMEOUT_SECONDS: 1800,
      JOB_TTL_SECONDS_AFTER_FINISHED: 60,
      JOB_ENV_CONFIGMAP: 'prod-cutroom',
    });
    expect(config.JOB_GPU_NODE_SELECTOR).to.deep.equal({ 'nvidia.com/gpu.present': 'true' });
    expect(config.JOB_GPU_TOLERATIONS).to.deep.equal([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  it('the chart’s empty values ({} and []) mean no GPU placement; empty ConfigMap or Secret names mean none', () => {
    const config = loadOperatorConfig({ ...images, JOB_GPU_NODE_SELECTOR: '{}', JOB_GPU_TOLERATIONS: '[]', JOB_ENV_CONFIGMAP: '', JOB_ENV_SECRET: '' });
    expect(config.JOB_GPU_NODE_SELECTOR).to.deep.equal({});
    expect(config.JOB_GPU_TOLERATIONS).to.deep.equal([]);
    expect(config.JOB_ENV_CONFIGMAP).to.equal(undefined);
  });

  it('a bad value stops start-up naming the variable: missing image, bad JSON, negative GPUs', () => {
    const failure = (env: Record<string, string>) => {
      try {
        loadOperatorConfig(env);
      } catch (error) {
        expect(error).to.be.instanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    expect(failure({ JOB_IMAGE_WHISPER: 'x' })).to.match(/JOB_IMAGE_FFMPEG/);
    expect(failure({ ...images, JOB_GPU_NODE_SELECTOR: '{nvidia' })).to.match(/JOB_GPU_NODE_SELECTOR: must be JSON/);
    expect(failure({ ...images, JOB_GPU_TOLERATIONS: '[{"effect":"Sometimes"}]' })).to.match(/JOB_GPU_TOLERATIONS/);
    expect(failure({ ...images, JOB_GPU_COUNT: '-1' })).to.match(/JOB_GPU_COUNT/);
  });

  it('lease timings must nest: renew deadline shorter than the lease, retry period shorter than the deadline', () => {
    expect(() => loadOperatorConfig({ ...images, OPERATOR_LEASE_DURATION_SECONDS: '5', OPERATOR_LEASE_RENEW_DEADLINE_SECONDS: '5' })).to.throw(
      ConfigError,
      /OPERATOR_LEASE_RENEW_DEADLINE_SECONDS: must be shorter than OPERATOR_LEASE_DURATION_SECONDS/,
    );
    expect(() => loadOperatorConfig({ ...images, OPERATOR_LEASE_RETRY_PERIOD_SECONDS: '10' })).to.throw(ConfigError, /OPERATOR_LEASE_RETRY_PERIOD_SECONDS/);
    expect(loadOperatorConfig(images)).to.include({ OPERATOR_LEASE_DURATION_SECONDS: 15, OPERATOR_LEASE_RENEW_DEADLINE_SECONDS: 10, OPERATOR_LEASE_RETRY_PERIOD_SECONDS: 2 });
  });
});
