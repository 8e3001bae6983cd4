import { expect } from 'chai';
import { configSchema } from '../../api/src/config.ts';
import { PLACEHOLDER, asList, asMap, readTemplate, readValues, strippedManifests } from './chart-files.ts';

const knownNames = new Set(Object.keys(configSchema.shape));

function apiDeploymentContainers(): Record<string, unknown>[] {
  const deployment = strippedManifests('api/deployment.yaml').find((manifest) => manifest.kind === 'Deployment');
  const podSpec = asMap(asMap(asMap(asMap(deployment).spec).template).spec);
  return [...asList(podSpec.initContainers), ...asList(podSpec.containers)].map(asMap);
}

/** Every environment name the chart gives the api: ConfigMap data, Secret keys, explicit env. */
function chartApiEnvNames(): string[] {
  const configMap = strippedManifests('config/configmap.yaml')[0];
  const secret = strippedManifests('config/secret.yaml')[0];
  const explicit = apiDeploymentContainers().flatMap((container) => asList(container.env).map((entry) => String(asMap(entry).name)));
  return [...Object.keys(asMap(asMap(configMap).data)), ...Object.keys(asMap(asMap(secret).stringData)), ...explicit].filter(
    (name) => name !== PLACEHOLDER,
  );
}

describe('api environment set by the chart', () => {
  it('reads the ConfigMap, the Secret and a few names of its own', () => {
    expect(chartApiEnvNames()).to.include.members([
      'DATABASE_URL', 'REDIS_URL', 'SECRET_KEY',
      'S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE',
      'WHISPER_BASE_URL', 'WHISPER_MODEL', 'SMTP_URL',
      'OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET',
      'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'MUX_TOKEN_ID', 'MUX_TOKEN_SECRET',
      'JOB_BACKEND', 'KUBE_NAMESPACE', 'HOST', 'PORT',
    ]);
  });

  it('every environment variable the chart sets for the api exists in configSchema', () => {
    const unknown = chartApiEnvNames().filter((name) => !knownNames.has(name));
    expect(unknown, 'names not in api/src/config.ts').to.deep.equal([]);
  });

  it('every api.settings name in the shipped values files exists in configSchema', () => {
    for (const file of ['values.yaml', 'ci/kind-values.yaml']) {
      const settings = Object.keys(asMap(asMap(readValues(file).api).settings));
      expect(settings.filter((name) => !knownNames.has(name)), file).to.deep.equal([]);
    }
  });

  it('the api runs the kubernetes job backend in the release namespace', () => {
    const api = apiDeploymentContainers().find((container) => container.name === 'api');
    const env = asList(asMap(api).env).map(asMap);
    expect(env).to.deep.include({ name: 'JOB_BACKEND', value: 'kubernetes' });
    expect(env).to.deep.include({ name: 'KUBE_NAMESPACE', value: PLACEHOLDER });
    expect(env).to.deep.include({ name: 'HOST', value: '0.0.0.0' });
  });

  it('the api and its migration step take their environment from the ConfigMap and the Secret', () => {
    const template = readTemplate('api/deployment.yaml');
    expect(template.match(/include "cutroom\.envFrom"/g) ?? []).to.have.length(2);
    const helper = readTemplate('_helpers.tpl');
    const envFrom = helper.slice(helper.indexOf('define "cutroom.envFrom"'));
    expect(envFrom).to.match(/configMapRef:\s+name: \{\{ include "cutroom.configMapName" \. \}\}/);
    expect(envFrom).to.match(/secretRef:\s+name: \{\{ include "cutroom.secretName" \. \}\}/);
  });
});
