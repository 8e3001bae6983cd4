import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { operatorConfigSchema } from '../../operator/src/config.ts';
import { asList, asMap, readValues, repoRoot, strippedManifests } from './chart-files.ts';

/** Names in the first column of the table under "## Operator environment contract" in docs/deploy.md. */
function documentedContract(): string[] {
  const doc = readFileSync(join(repoRoot, 'docs', 'deploy.md'), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith('Operator environment contract')) ?? '';
  return [...section.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((match) => match[1] ?? '');
}

function operatorContainer(): Record<string, unknown> {
  const deployment = strippedManifests('operator/deployment.yaml').find((manifest) => manifest.kind === 'Deployment');
  const podSpec = asMap(asMap(asMap(asMap(deployment).spec).template).spec);
  return asMap(asList(podSpec.containers)[0]);
}

describe('operator environment contract', () => {
  const env = asList(operatorContainer().env).map(asMap);

  it('the operator Deployment sets exactly the variables docs/deploy.md lists', () => {
    expect(env.map((entry) => String(entry.name)).sort()).to.deep.equal(documentedContract().sort());
  });

  it('includes every name the job system relies on', () => {
    expect(documentedContract()).to.include.members([
      'JOB_IMAGE_FFMPEG', 'JOB_IMAGE_WHISPER', 'JOB_GPU_COUNT', 'JOB_GPU_NODE_SELECTOR', 'JOB_GPU_TOLERATIONS',
      'JOB_BACKOFF_LIMIT', 'JOB_TIMEOUT_SECONDS', 'JOB_TTL_SECONDS_AFTER_FINISHED',
      'JOB_SERVICE_ACCOUNT_ANALYSIS', 'JOB_SERVICE_ACCOUNT_RENDER', 'JOB_SERVICE_ACCOUNT_ARTIFACT',
      'OPERATOR_LEASE_NAME', 'POD_NAME', 'KUBE_NAMESPACE',
    ]);
  });

  it('the Whisper sidecar’s part: image, weights, model name, port and resources; no model cache claim', () => {
    const sidecar = ['JOB_WHISPER_SIDECAR_IMAGE', 'JOB_WHISPER_SIDECAR_WEIGHTS', 'JOB_WHISPER_SIDECAR_MODEL', 'JOB_WHISPER_SIDECAR_PORT', 'JOB_WHISPER_SIDECAR_RESOURCES'];
    expect(documentedContract().filter((name) => name.startsWith('JOB_WHISPER_SIDECAR_')).sort()).to.deep.equal([...sidecar].sort());
    expect(env.map((entry) => String(entry.name)).filter((name) => name.startsWith('JOB_WHISPER_SIDECAR_')).sort()).to.deep.equal([...sidecar].sort());
    expect(Object.keys(operatorConfigSchema.shape)).to.include.members(sidecar);
    expect(Object.keys(operatorConfigSchema.shape)).to.not.include('JOB_WHISPER_SIDECAR_CACHE_CLAIM');
  });

  it('POD_NAME comes from the downward API', () => {
    expect(env.find((entry) => entry.name === 'POD_NAME')).to.deep.equal({
      name: 'POD_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
  });

  it('runs two replicas by default, one leading through the Lease', () => {
    const deployment = strippedManifests('operator/deployment.yaml')[0];
    expect(asMap(asMap(deployment).spec).replicas).to.equal('TEMPLATE');
    expect(asMap(readValues().operator).replicaCount).to.equal(2);
  });
});

