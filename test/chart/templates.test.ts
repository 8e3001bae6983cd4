import { expect } from 'chai';
import {
  asList,
  asMap,
  definedTemplates,
  includedTemplates,
  manifestTemplates,
  readChartFile,
  readTemplate,
  readValues,
  strippedDocuments,
  strippedManifests,
  templateFiles,
  valuePaths,
} from './chart-files.ts';

const helpers = readTemplate('_helpers.tpl');
const defined = new Set(definedTemplates(helpers));
const schema = JSON.parse(readChartFile('values.schema.json')) as Record<string, unknown>;

/** Follows a dotted value path through values.schema.json; free-form maps accept any rest. */
function schemaHasPath(path: string): boolean {
  const definitions = asMap(schema.definitions);
  const resolve = (node: Record<string, unknown>): Record<string, unknown> => {
    const ref = node.$ref;
    return typeof ref === 'string' ? resolve(asMap(definitions[ref.replace('#/definitions/', '')])) : node;
  };
  let node = resolve(schema);
  for (const segment of path.split('.')) {
    const properties = node.properties;
    if (properties === undefined) return node.type === 'object' || node.additionalProperties !== undefined;
    const next = asMap(properties)[segment];
    if (next === undefined) return false;
    node = resolve(asMap(next));
  }
  return true;
}

describe('chart templates (read without Helm: actions stripped)', () => {
  for (const file of manifestTemplates()) {
    it(`${file} parses as YAML manifests with apiVersion and kind`, () => {
      const documents = strippedDocuments(file);
      expect(documents.flatMap((document) => document.errors), 'YAML errors').to.deep.equal([]);
      const manifests = strippedManifests(file);
      expect(manifests.length, 'manifests').to.be.greaterThan(0);
      for (const manifest of manifests) {
        expect(manifest.apiVersion, `${String(manifest.kind)} apiVersion`).to.be.a('string');
        expect(asMap(manifest.metadata).name, `${String(manifest.kind)} name`).to.not.equal(undefined);
      }
    });
  }

  it('every include names a define in _helpers.tpl', () => {
    const missing = templateFiles().flatMap((file) =>
      includedTemplates(readTemplate(file)).filter((name) => !defined.has(name)).map((name) => `${file}: ${name}`),
    );
    expect(missing).to.deep.equal([]);
  });

  it('every define in _helpers.tpl is used', () => {
    const used = new Set(templateFiles().flatMap((file) => includedTemplates(readTemplate(file))));
    expect([...defined].filter((name) => !used.has(name))).to.deep.equal([]);
  });

  it('every value a template reads is described in values.schema.json', () => {
    const unknown = templateFiles().flatMap((file) =>
      valuePaths(readTemplate(file)).filter((path) => !schemaHasPath(path)).map((path) => `${file}: .Values.${path}`),
    );
    expect(unknown).to.deep.equal([]);
  });

  it('namespaced objects are placed in the release namespace', () => {
    for (const file of manifestTemplates()) {
      for (const manifest of strippedManifests(file)) {
        expect(asMap(manifest.metadata).namespace, `${file} ${String(manifest.kind)}`).to.equal('TEMPLATE');
      }
    }
  });

  it('the api Role allows create/get/list/watch/delete of the three job kinds and nothing else', () => {
    const role = strippedManifests('api/rbac.yaml').find((manifest) => manifest.kind === 'Role');
    expect(asList(asMap(role).rules)).to.deep.equal([
      {
        apiGroups: ['cutroom.dev'],
        resources: ['analysisjobs', 'renderjobs', 'artifactjobs'],
        verbs: ['create', 'get', 'list', 'watch', 'delete'],
      },
    ]);
  });

  it('a job service account may only get and patch its own kind\'s status', () => {
    const template = readTemplate('jobs/rbac.yaml');
    expect(template).to.include('range $kind := list "analysis" "render" "artifact"');
    const role = strippedManifests('jobs/rbac.yaml').find((manifest) => manifest.kind === 'Role');
    expect(asList(asMap(role).rules)).to.deep.equal([
      { apiGroups: ['cutroom.dev'], resources: ['TEMPLATE'], verbs: ['get', 'patch'] },
    ]);
    expect(template).to.include('resources: [{{ printf "%sjobs/status" $kind | quote }}]');
  });

  it('the operator Role covers its custom resources with status, Jobs, pods, its Lease and events', () => {
    const role = strippedManifests('operator/rbac.yaml').find((manifest) => manifest.kind === 'Role');
    const rules = asList(asMap(role).rules).map(asMap);
    const resources = rules.flatMap((rule) => asList(rule.resources));
    expect(resources).to.include.members([
      'analysisjobs', 'renderjobs', 'artifactjobs',
      'analysisjobs/status', 'renderjobs/status', 'artifactjobs/status',
      'jobs', 'pods', 'leases', 'events',
    ]);
    const pods = rules.find((rule) => asList(rule.resources).includes('pods'));
    expect(asList(asMap(pods).verbs)).to.deep.equal(['get', 'list', 'watch']);
    expect(resources, 'no access to Secrets').to.not.include('secrets');
  });

  it('the api container runs non-root on a read-only root filesystem with a writable /tmp', () => {
    const api = asMap(readValues().api);
    expect(asMap(api.securityContext).readOnlyRootFilesystem).to.equal(true);
    expect(asMap(api.podSecurityContext).runAsNonRoot).to.equal(true);
    const deployment = strippedManifests('api/deployment.yaml')[0];
    const pod = asMap(asMap(asMap(deployment).spec).template);
    const container = asMap(asList(asMap(pod.spec).containers)[0]);
    expect(asList(container.volumeMounts)).to.deep.include({ name: 'tmp', mountPath: '/tmp' });
    expect(asMap(asMap(container.readinessProbe).httpGet)).to.deep.equal({ path: '/readyz', port: 'http' });
    expect(asMap(asMap(container.livenessProbe).httpGet)).to.deep.equal({ path: '/healthz', port: 'http' });
    expect(asList(container.ports)).to.deep.equal([{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
  });

  for (const component of ['api', 'operator', 'whisper']) {
    it(`the ${component} pod runs non-root (uid 1000) and, its root filesystem read-only, has an emptyDir at /tmp`, () => {
      const values = asMap(readValues()[component]);
      expect(asMap(values.podSecurityContext)).to.include({ runAsNonRoot: true, runAsUser: 1000 });
      expect(asMap(values.securityContext).readOnlyRootFilesystem).to.equal(true);
      const file = `${component}/deployment.yaml`;
      const deployment = strippedManifests(file).find((manifest) => manifest.kind === 'Deployment');
      const container = asMap(asList(asMap(asMap(asMap(asMap(deployment).spec).template).spec).containers)[0]);
      expect(asList(container.volumeMounts), file).to.deep.include({ name: 'tmp', mountPath: '/tmp' });
      expect(readTemplate(file), file).to.match(/\{\{- include "cutroom\.tmpVolume" \(dict "sizeLimit" [^)]+\) \| nindent 8 \}\}/);
    });
  }
});
