import { expect } from 'chai';
import { PLACEHOLDER, asMap, readTemplate, strippedManifests } from './chart-files.ts';

function operatorEnv(name: string): string {
  const match = new RegExp(`- name: ${name}\\s+value: \\{\\{ include "([^"]+)" \\. \\| quote \\}\\}`).exec(readTemplate('operator/deployment.yaml'));
  return match?.[1] ?? '';
}

function helper(name: string): string {
  const text = readTemplate('_helpers.tpl');
  const start = text.indexOf(`define "${name}"`);
  return start < 0 ? '' : text.slice(start, text.indexOf('{{- end }}', start));
}

const dataKeys = (file: string, field: 'data' | 'stringData'): string[] =>
  Object.keys(asMap(asMap(strippedManifests(file)[0])[field])).filter((key) => key !== PLACEHOLDER);

describe('job pods get only what they need from the chart', () => {
  it('the job Secret carries exactly the S3 keys', () => {
    const secrets = strippedManifests('config/job-secret.yaml');
    expect(secrets.map((manifest) => manifest.kind)).to.deep.equal(['Secret']);
    expect(dataKeys('config/job-secret.yaml', 'stringData').sort()).to.deep.equal(['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']);
    expect(readTemplate('config/job-secret.yaml')).to.match(/name: \{\{ include "cutroom\.jobSecretName" \. \}\}/);
    expect(readTemplate('config/job-secret.yaml')).to.match(/\{\{- if not \.Values\.existingJobSecret \}\}/);
  });

  it('JOB_ENV_SECRET names the job Secret (or existingJobSecret), never the app Secret', () => {
    expect(operatorEnv('JOB_ENV_SECRET')).to.equal('cutroom.jobSecretName');
    const name = helper('cutroom.jobSecretName');
    expect(name).to.include('.Values.existingJobSecret');
    expect(name).to.not.match(/secretName|existingSecret\b/);
  });

  it('JOB_ENV_CONFIGMAP names the job ConfigMap, which holds nothing secret and no api.settings', () => {
    expect(operatorEnv('JOB_ENV_CONFIGMAP')).to.equal('cutroom.jobConfigMapName');
    expect(readTemplate('config/job-configmap.yaml')).to.match(/name: \{\{ include "cutroom\.jobConfigMapName" \. \}\}/);
    const keys = dataKeys('config/job-configmap.yaml', 'data');
    const secretKeys = [...dataKeys('config/secret.yaml', 'stringData'), ...dataKeys('config/job-secret.yaml', 'stringData')];
    expect(keys.filter((key) => secretKeys.includes(key))).to.deep.equal([]);
    expect(keys.sort()).to.deep.equal(
      ['LOG_LEVEL', 'NODE_ENV', 'S3_BUCKET', 'S3_ENDPOINT', 'S3_FORCE_PATH_STYLE', 'S3_REGION', 'WHISPER_BASE_URL', 'WHISPER_MODEL'].sort(),
    );
    const actions = readTemplate('config/job-configmap.yaml').replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '');
    expect(actions).to.not.match(/range|api\.settings|\.Values\.(secretKey|postgresql|redis|smtp|oidc|stripe|mux)\b/);
  });

  it('the job Secret and ConfigMap are not the api\'s', () => {
    expect(helper('cutroom.jobConfigMapName')).to.include('"job"');
    expect(helper('cutroom.jobSecretName')).to.include('"job"');
  });
});
