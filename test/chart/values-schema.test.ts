import { expect } from 'chai';
import { mergeValues, readValues, schemaValidator } from './chart-files.ts';
import type { Values } from './chart-files.ts';

describe('chart values.schema.json (draft-07, as Helm reads it)', () => {
  const validate = schemaValidator();
  const defaults = readValues();
  const errorsOf = (values: Values): string[] =>
    validate(values) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
  const withOverride = (override: Values): Values => mergeValues(defaults, override);

  it('accepts the default values.yaml', () => {
    expect(errorsOf(defaults)).to.deep.equal([]);
  });

  it('accepts the kind e2e values over the defaults', () => {
    expect(errorsOf(withOverride(readValues('ci/kind-values.yaml')))).to.deep.equal([]);
  });

  it('accepts global values passed down by a parent chart', () => {
    expect(errorsOf(withOverride({ global: { imageRegistry: 'registry.example.com' } }))).to.deep.equal([]);
  });

  const rejected: Array<[string, Values]> = [
    ['a misspelt top-level key', { postgres: { url: 'postgres://db/cutroom' } }],
    ['a misspelt nested key', { api: { replicas: 3 } }],
    ['a replica count given as a string', { api: { replicaCount: '2' } }],
    ['a DATABASE_URL that is not a postgres URL', { postgresql: { url: 'mysql://db/cutroom' } }],
    ['a SECRET_KEY shorter than 16 characters', { secretKey: 'short' }],
    ['an unknown log level', { config: { logLevel: 'verbose' } }],
    ['a negative GPU count for analysis jobs', { jobs: { analysis: { gpu: { count: -1 } } } }],
    ['a GPU node selector value that is not a string', { jobs: { analysis: { gpu: { nodeSelector: { gpu: true } } } } }],
    ['an api setting whose name is not an environment name', { api: { settings: { 'login-max-attempts': '5' } } }],
    ['an api setting given as a number', { api: { settings: { LOGIN_MAX_ATTEMPTS: 5 } } }],
    ['an image digest that is not sha256', { api: { image: { digest: 'md5:abc' } } }],
    ['an ingress path without a leading slash', { api: { ingress: { hosts: [{ host: 'a.example', paths: [{ path: 'api', pathType: 'Prefix' }] }] } } }],
    ['an existingSecret that is not a Kubernetes name', { existingSecret: 'Cutroom_Secrets' }],
    ['an existingJobSecret that is not a Kubernetes name', { existingJobSecret: 'Cutroom_Job_Secrets' }],
    ['the removed Whisper model cache (the weights are in the image)', { whisper: { cache: { existingClaim: 'whisper-models' } } }],
    ['Whisper weights the server image does not hold', { whisper: { weights: 'large-v3' } }],
    ['a Hugging Face model id as Whisper weights', { whisper: { weights: 'Systran/faster-whisper-small' } }],
    ['a Whisper concurrency of 0', { whisper: { concurrency: 0 } }],
    ['a Whisper image digest that is not sha256', { whisper: { image: { digest: 'latest' } } }],
  ];
  for (const [what, override] of rejected) {
    it(`rejects ${what}`, () => {
      expect(errorsOf(withOverride(override))).to.not.deep.equal([]);
    });
  }

  it('rejects values without a required section', () => {
    const { jobs: _jobs, ...withoutJobs } = defaults;
    expect(errorsOf(withoutJobs)).to.not.deep.equal([]);
  });
});
