import { expect } from 'chai';
import { loadOperatorConfig, whisperPlacements } from '../../operator/src/config.ts';
import { asList, asMap, mergeValues, readChartFile, readTemplate, readValues, schemaValidator, strippedManifests } from './chart-files.ts';
import type { Values } from './chart-files.ts';

const validate = schemaValidator();
const defaults = readValues();
const errorsOf = (values: Values): string[] =>
  validate(values) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
const withWhisper = (whisper: Values): Values => mergeValues(defaults, { whisper });

/** The template's actions, in order, comments left out. */
function actions(text: string): string[] {
  return [...text.replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '').matchAll(/\{\{-?\s*(.*?)\s*-?\}\}/g)].map((match) => match[1] ?? '');
}

/** Whether the file's first action opens a block that its last action closes: everything inside is conditional. */
function wholeFileInside(text: string, opening: string): boolean {
  const all = actions(text);
  if (all[0] !== opening) return false;
  let depth = 0;
  for (const [index, action] of all.entries()) {
    if (/^(if|with|range|define|block)\b/.test(action)) depth += 1;
    else if (action === 'end') depth -= 1;
    if (depth === 0) return index === all.length - 1;
  }
  return false;
}

function helperBody(name: string): string {
  const text = readTemplate('_helpers.tpl');
  const start = text.indexOf(`define "${name}"`);
  return start < 0 ? '' : text.slice(start, text.indexOf('{{- end }}\n\n', start));
}

function operatorEnv(): Map<string, string> {
  const text = readTemplate('operator/deployment.yaml');
  return new Map([...text.matchAll(/- name: (\w+)\n\s+value: (\{\{.*\}\})/g)].map((match) => [match[1] ?? '', match[2] ?? '']));
}

describe('chart: whisper.placement', () => {
  it('values.yaml says shared, the schema defaults to shared, and both name the operator’s placements', () => {
    expect(asMap(defaults.whisper).placement).to.equal('shared');
    const schema = JSON.parse(readChartFile('values.schema.json')) as Values;
    const placement = asMap(asMap(asMap(asMap(schema.properties).whisper).properties).placement);
    expect(placement.default).to.equal('shared');
    expect(placement.enum).to.deep.equal([...whisperPlacements]);
  });

  it('values.schema.json accepts shared and sidecar', () => {
    expect(errorsOf(withWhisper({ placement: 'shared' }))).to.deep.equal([]);
    expect(errorsOf(withWhisper({ placement: 'sidecar' }))).to.deep.equal([]);
    expect(errorsOf(withWhisper({ placement: 'sidecar', image: { tag: '0.5.0-cuda' }, gpu: { enabled: true, count: 1, nodeSelector: { 'nvidia.com/gpu.present': 'true' } } }))).to.deep.equal([]);
    expect(errorsOf(withWhisper({ placement: 'shared', enabled: false, external: { baseUrl: 'http://whisper.example.com/v1', model: 'whisper-1' } }))).to.deep.equal([]);
  });

  for (const [what, placement] of [['an unknown placement', 'gpu'], ['a misspelt one', 'Sidecar'], ['an empty one', ''], ['a number', 1], ['null', null]] as const) {
    it(`values.schema.json refuses ${what}`, () => {
      expect(errorsOf(withWhisper({ placement }))).to.not.deep.equal([]);
    });
  }

  it('values.schema.json refuses sidecar with an external server (whisper.enabled=false)', () => {
    expect(errorsOf(withWhisper({ placement: 'sidecar', enabled: false }))).to.not.deep.equal([]);
  });

  it('the old jobs.analysis.gpu is refused by name: the server’s GPU is whisper.gpu in either placement', () => {
    expect(errorsOf(mergeValues(defaults, { jobs: { analysis: { gpu: { count: 1 } } } }))).to.not.deep.equal([]);
  });

  it('whisper.gpu (JOB_GPU_* with sidecar) refuses a GPU count below 1 and a node selector value that is not a string', () => {
    expect(errorsOf(withWhisper({ placement: 'sidecar', gpu: { enabled: true, count: 0 } }))).to.not.deep.equal([]);
    expect(errorsOf(withWhisper({ placement: 'sidecar', gpu: { enabled: true, count: -1 } }))).to.not.deep.equal([]);
    expect(errorsOf(withWhisper({ placement: 'sidecar', gpu: { enabled: true, nodeSelector: { gpu: true } } }))).to.not.deep.equal([]);
  });

  it('the whisper Deployment and Service render only with the chart’s own server in shared placement', () => {
    for (const file of ['whisper/deployment.yaml', 'whisper/service.yaml']) {
      expect(wholeFileInside(readTemplate(file), 'if include "cutroom.whisperShared" .'), file).to.equal(true);
    }
    expect(helperBody('cutroom.whisperShared')).to.include('{{- if and .Values.whisper.enabled (eq .Values.whisper.placement "shared") }}true{{ end }}');
  });

  it('WHISPER_BASE_URL in the ConfigMaps: the Service with shared, the external server when disabled, none with sidecar', () => {
    const body = helperBody('cutroom.whisperBaseUrl');
    expect(body).to.include('{{- if include "cutroom.whisperShared" . }}');
    expect(body).to.include('{{- else if not .Values.whisper.enabled }}');
    expect(body).to.not.match(/\{\{-? else \}\}/);
    for (const file of ['config/configmap.yaml', 'config/job-configmap.yaml']) {
      expect(readTemplate(file), file).to.include('{{- with include "cutroom.whisperBaseUrl" . }}\n  WHISPER_BASE_URL:');
    }
  });

  it('the operator Deployment passes the placement and the sidecar’s image, model, port, resources, cache and GPU', () => {
    const text = readTemplate('operator/deployment.yaml');
    expect(text).to.include('{{- $whisper := .Values.whisper }}');
    const env = operatorEnv();
    expect(Object.fromEntries([...env].filter(([name]) => name.startsWith('JOB_WHISPER_') || name.startsWith('JOB_GPU_')))).to.deep.equal({
      JOB_WHISPER_PLACEMENT: '{{ $whisper.placement | quote }}',
      JOB_WHISPER_SIDECAR_IMAGE: '{{ include "cutroom.image" (dict "ctx" . "image" $whisper.image) | quote }}',
      JOB_WHISPER_SIDECAR_MODEL: '{{ $whisper.model | quote }}',
      JOB_WHISPER_SIDECAR_PORT: '{{ $whisper.port | int64 | quote }}',
      JOB_WHISPER_SIDECAR_RESOURCES: '{{ default (dict) $whisper.resources | toJson | quote }}',
      JOB_WHISPER_SIDECAR_CACHE_CLAIM: '{{ $whisper.cache.existingClaim | default "" | quote }}',
      JOB_GPU_COUNT: '{{ ternary $whisper.gpu.count 0 $whisper.gpu.enabled | int64 | quote }}',
      JOB_GPU_NODE_SELECTOR: '{{ ternary (default (dict) $whisper.gpu.nodeSelector) (dict) $whisper.gpu.enabled | toJson | quote }}',
      JOB_GPU_TOLERATIONS: '{{ ternary (default (list) $whisper.gpu.tolerations) (list) $whisper.gpu.enabled | toJson | quote }}',
    });
    const deployment = strippedManifests('operator/deployment.yaml').find((manifest) => manifest.kind === 'Deployment');
    const container = asMap(asList(asMap(asMap(asMap(asMap(deployment).spec).template).spec).containers)[0]);
    expect(asList(container.env).map((entry) => asMap(entry).name)).to.include('JOB_WHISPER_PLACEMENT');
  });

  it('the operator accepts what the chart renders from values.yaml, in both placements', () => {
    const whisper = asMap(defaults.whisper);
    const gpu = asMap(whisper.gpu);
    const image = asMap(whisper.image);
    for (const placement of whisperPlacements) {
      const config = loadOperatorConfig({
        JOB_IMAGE_FFMPEG: 'cutroom/job-ffmpeg:0.1.0',
        JOB_IMAGE_WHISPER: 'cutroom/job-whisper:0.1.0',
        JOB_WHISPER_PLACEMENT: placement,
        JOB_WHISPER_SIDECAR_IMAGE: `${String(image.repository)}:${String(image.tag)}`,
        JOB_WHISPER_SIDECAR_MODEL: String(whisper.model),
        JOB_WHISPER_SIDECAR_PORT: String(whisper.port),
        JOB_WHISPER_SIDECAR_RESOURCES: JSON.stringify(whisper.resources),
        JOB_WHISPER_SIDECAR_CACHE_CLAIM: String(asMap(whisper.cache).existingClaim),
        JOB_GPU_COUNT: gpu.enabled === true ? String(gpu.count) : '0',
        JOB_GPU_NODE_SELECTOR: JSON.stringify(gpu.enabled === true ? gpu.nodeSelector : {}),
        JOB_GPU_TOLERATIONS: JSON.stringify(gpu.enabled === true ? gpu.tolerations : []),
      });
      expect(config.JOB_WHISPER_PLACEMENT).to.equal(placement);
      expect(config.JOB_WHISPER_SIDECAR_RESOURCES).to.deep.equal({ requests: { cpu: '1', memory: '2Gi' }, limits: { memory: '6Gi' } });
    }
  });
});
