import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadOperatorConfig, whisperPlacements, whisperWeights } from '../../operator/src/config.ts';
import { asList, asMap, mergeValues, readChartFile, readTemplate, readValues, repoRoot, schemaValidator, strippedManifests, templateFiles, valuePaths } from './chart-files.ts';
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

/** A template's literal `- name: X / value: …` pairs, the value as written (an action or a literal). */
function templateEnv(file: string): Map<string, string> {
  const text = readTemplate(file);
  return new Map([...text.matchAll(/- name: (\w+)\n\s+value: (.*)/g)].map((match) => [match[1] ?? '', match[2] ?? '']));
}

function operatorEnv(): Map<string, string> {
  return new Map([...templateEnv('operator/deployment.yaml')].filter(([, value]) => value.startsWith('{{')));
}

const appVersion = String(asMap(parse(readChartFile('Chart.yaml'))).appVersion);

/** The names of WEIGHTS in recognizer/cutroom_recognizer/weights.py: what the server image holds. */
function recognizerWeights(): string[] {
  const text = readFileSync(join(repoRoot, 'recognizer', 'cutroom_recognizer', 'weights.py'), 'utf8');
  const table = text.slice(text.indexOf('WEIGHTS = {'), text.indexOf('\n}\n', text.indexOf('WEIGHTS = {')));
  return [...table.matchAll(/^ {4}"([^"]+)": Weights\(/gm)].map((match) => match[1] ?? '');
}

function whisperContainer(): Values {
  const deployment = strippedManifests('whisper/deployment.yaml').find((manifest) => manifest.kind === 'Deployment');
  return asMap(asList(asMap(asMap(asMap(asMap(deployment).spec).template).spec).containers)[0]);
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
    expect(errorsOf(withWhisper({ placement: 'sidecar', image: { tag: `${appVersion}-cuda` }, gpu: { enabled: true, count: 1, nodeSelector: { 'nvidia.com/gpu.present': 'true' } } }))).to.deep.equal([]);
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

  it('the operator Deployment passes the placement and the sidecar’s image, weights, model, port, resources and GPU (no model cache)', () => {
    const text = readTemplate('operator/deployment.yaml');
    expect(text).to.include('{{- $whisper := .Values.whisper }}');
    const env = operatorEnv();
    expect(Object.fromEntries([...env].filter(([name]) => name.startsWith('JOB_WHISPER_') || name.startsWith('JOB_GPU_')))).to.deep.equal({
      JOB_WHISPER_PLACEMENT: '{{ $whisper.placement | quote }}',
      JOB_WHISPER_SIDECAR_IMAGE: '{{ include "cutroom.image" (dict "ctx" . "image" $whisper.image) | quote }}',
      JOB_WHISPER_SIDECAR_WEIGHTS: '{{ $whisper.weights | quote }}',
      JOB_WHISPER_SIDECAR_MODEL: '{{ $whisper.model | quote }}',
      JOB_WHISPER_SIDECAR_PORT: '{{ $whisper.port | int64 | quote }}',
      JOB_WHISPER_SIDECAR_RESOURCES: '{{ default (dict) $whisper.resources | toJson | quote }}',
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
        JOB_WHISPER_SIDECAR_IMAGE: `${String(image.repository)}:${String(image.tag) || appVersion}`,
        JOB_WHISPER_SIDECAR_WEIGHTS: String(whisper.weights),
        JOB_WHISPER_SIDECAR_MODEL: String(whisper.model),
        JOB_WHISPER_SIDECAR_PORT: String(whisper.port),
        JOB_WHISPER_SIDECAR_RESOURCES: JSON.stringify(whisper.resources),
        JOB_GPU_COUNT: gpu.enabled === true ? String(gpu.count) : '0',
        JOB_GPU_NODE_SELECTOR: JSON.stringify(gpu.enabled === true ? gpu.nodeSelector : {}),
        JOB_GPU_TOLERATIONS: JSON.stringify(gpu.enabled === true ? gpu.tolerations : []),
      });
      expect(config.JOB_WHISPER_PLACEMENT).to.equal(placement);
      expect(config.JOB_WHISPER_SIDECAR_IMAGE).to.equal(`cutroom/whisper-server:${appVersion}`);
      expect(config.JOB_WHISPER_SIDECAR_WEIGHTS).to.equal('base');
      expect(config.JOB_WHISPER_SIDECAR_RESOURCES).to.deep.equal({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } });
    }
  });
});

describe('chart: the Whisper server is recognizer/’s image', () => {
  const whisper = asMap(defaults.whisper);
  const schemaWhisper = asMap(asMap(asMap(JSON.parse(readChartFile('values.schema.json')) as Values).properties).whisper);

  it('whisper.image is cutroom/whisper-server, its tag the chart’s appVersion unless set (like every image built here)', () => {
    expect(whisper.image).to.deep.equal({ repository: 'cutroom/whisper-server', tag: '', digest: '', pullPolicy: 'IfNotPresent' });
    expect(asMap(asMap(schemaWhisper.properties).image).$ref).to.equal('#/definitions/appImage');
    expect(readTemplate('whisper/deployment.yaml')).to.include('image: {{ include "cutroom.image" (dict "ctx" . "image" $whisper.image) | quote }}');
    expect(errorsOf(withWhisper({ image: { digest: `sha256:${'a'.repeat(64)}` } }))).to.deep.equal([]);
    expect(errorsOf(withWhisper({ image: { tag: `${appVersion}-cuda`, digest: 'latest' } }))).to.not.deep.equal([]);
    // gpu.enabled with the CPU image would fail every request: the install notes say so.
    expect(readTemplate('NOTES.txt')).to.include('{{- if and .Values.whisper.enabled .Values.whisper.gpu.enabled (not (hasSuffix "-cuda" (default .Chart.AppVersion .Values.whisper.image.tag))) }}');
  });

  it('whisper.weights (WHISPER_WEIGHTS) is base by default, one of the weights the image holds; the schema refuses others', () => {
    expect(whisper.weights).to.equal('base');
    const weights = asMap(asMap(schemaWhisper.properties).weights);
    expect(weights.default).to.equal('base');
    expect(weights.enum).to.deep.equal([...whisperWeights]);
    expect(recognizerWeights().sort()).to.deep.equal([...whisperWeights].sort());
    expect(asList(schemaWhisper.required)).to.include('weights');
    expect(errorsOf(withWhisper({ weights: 'tiny.en' }))).to.deep.equal([]);
    for (const refused of ['small', 'Systran/faster-whisper-small', 'large-v3', '']) {
      expect(errorsOf(withWhisper({ weights: refused })), refused).to.not.deep.equal([]);
    }
  });

  it('whisper.model is only the name analysis jobs send: whisper-1 by default, not a weights name', () => {
    expect(whisper.model).to.equal('whisper-1');
    expect(asMap(asMap(schemaWhisper.properties).model).description).to.match(/does not pick weights/);
    expect(templateEnv('whisper/deployment.yaml').has('WHISPER_MODEL')).to.equal(false);
    expect(readTemplate('whisper/deployment.yaml')).to.not.include('$whisper.model');
  });

  it('the Deployment’s server env: host, port, weights, device (cuda with gpu.enabled), concurrency; nothing of the old server', () => {
    expect(Object.fromEntries(templateEnv('whisper/deployment.yaml'))).to.deep.equal({
      WHISPER_HOST: '"0.0.0.0"',
      WHISPER_PORT: '{{ $whisper.port | int64 | quote }}',
      WHISPER_WEIGHTS: '{{ $whisper.weights | quote }}',
      WHISPER_DEVICE: '{{ ternary "cuda" "cpu" $whisper.gpu.enabled }}',
      WHISPER_CONCURRENCY: '{{ $whisper.concurrency | int64 | quote }}',
    });
    expect(asList(whisperContainer().env).map((entry) => asMap(entry).name)).to.deep.equal(['WHISPER_HOST', 'WHISPER_PORT', 'WHISPER_WEIGHTS', 'WHISPER_DEVICE', 'WHISPER_CONCURRENCY']);
    expect(whisper.concurrency).to.equal(2);
    expect(errorsOf(withWhisper({ concurrency: 0 }))).to.not.deep.equal([]);
  });

  it('no model cache anywhere: no whisper.cache value (the schema refuses it), no /cache volume, no Hugging Face or old server settings', () => {
    expect(whisper).to.not.have.property('cache');
    expect(asMap(schemaWhisper.properties)).to.not.have.property('cache');
    expect(errorsOf(withWhisper({ cache: { existingClaim: 'whisper-models' } }))).to.not.deep.equal([]);
    for (const file of templateFiles()) {
      const text = readTemplate(file);
      expect(valuePaths(text).filter((path) => path.startsWith('whisper.cache')), file).to.deep.equal([]);
      for (const gone of ['WHISPER__', 'UVICORN_', 'HF_HOME', 'CACHE_CLAIM', '/cache', 'faster-whisper-server']) {
        expect(text, `${file}: ${gone}`).to.not.include(gone);
      }
    }
  });

  it('a startup probe of at most three minutes: the weights are in the image, nothing downloads first', () => {
    const probe = asMap(whisperContainer().startupProbe);
    expect(asMap(probe.httpGet)).to.deep.equal({ path: '/health', port: 'http' });
    const periodSeconds = Number(probe.periodSeconds);
    const failureThreshold = Number(probe.failureThreshold);
    expect(periodSeconds * failureThreshold).to.be.within(30, 180);
  });

  it('runs as the image’s non-root uid 1000 on a read-only root filesystem, with an emptyDir at /tmp for uploads', () => {
    expect(whisper.podSecurityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
    expect(asMap(whisper.securityContext)).to.include({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    const container = whisperContainer();
    expect(asList(container.volumeMounts)).to.deep.equal([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(readTemplate('whisper/deployment.yaml')).to.include('{{- include "cutroom.tmpVolume" (dict "sizeLimit" $whisper.tmpSizeLimit) | nindent 8 }}');
    expect(whisper.tmpSizeLimit).to.equal('1Gi');
  });

  it('memory sized for base int8 on CPU (~300–500 MB a recognizer process) at the default concurrency', () => {
    expect(whisper.resources).to.deep.equal({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } });
  });
});
