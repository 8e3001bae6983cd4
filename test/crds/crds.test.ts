import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';
import { crdFiles, structuralSchema } from '../../crds/contract/crd-definitions.ts';
import type { CustomResourceDefinition, StructuralSchema } from '../../crds/contract/crd-definitions.ts';
import { cutroomGroup, cutroomVersion, jobKindList } from '../../crds/contract/resources.ts';
import { z } from 'zod';

const crdDir = fileURLToPath(new URL('../../crds/', import.meta.url));

// Short names of built-in kinds a cluster already serves; ours must not shadow them.
const builtinShortNames = [
  'cm', 'cs', 'csr', 'cj', 'crd', 'crds', 'ds', 'deploy', 'ep', 'ev', 'hpa', 'ing', 'limits', 'netpol', 'no', 'ns',
  'pdb', 'po', 'psp', 'pv', 'pvc', 'quota', 'rc', 'rs', 'sa', 'sc', 'sts', 'svc',
];

async function committedCrds(): Promise<CustomResourceDefinition[]> {
  return Promise.all(jobKindList.map(async (k) => parse(await readFile(`${crdDir}${k.plural}.${cutroomGroup}.yaml`, 'utf8')) as CustomResourceDefinition));
}

// Every place a structural schema can hold a nested schema, with its path.
function* schemaNodes(node: StructuralSchema, path: string): Generator<[string, StructuralSchema]> {
  yield [path, node];
  for (const [name, child] of Object.entries((node['properties'] ?? {}) as Record<string, StructuralSchema>)) {
    yield* schemaNodes(child, `${path}.${name}`);
  }
  if (node['items']) yield* schemaNodes(node['items'] as StructuralSchema, `${path}[]`);
  if (typeof node['additionalProperties'] === 'object') yield* schemaNodes(node['additionalProperties'] as StructuralSchema, `${path}{}`);
}

describe('CRDs (crds/*.yaml generated from crds/contract/resources.ts)', () => {
  it('the committed YAML is exactly what hack/gen-crds.ts produces now', async () => {
    const files = crdFiles();
    for (const { fileName, text } of files) {
      expect(await readFile(crdDir + fileName, 'utf8'), `crds/${fileName} is stale: run node hack/gen-crds.ts`).to.equal(text);
    }
    const yamlFiles = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml'));
    expect(yamlFiles.sort()).to.deep.equal(files.map((f) => f.fileName).sort());
  });

  it('each CRD is namespaced in cutroom.dev/v1alpha1, category cutroom, named <plural>.cutroom.dev, with non-clashing short names', async () => {
    const seen = new Set<string>();
    for (const crd of await committedCrds()) {
      expect(crd.metadata.name).to.equal(`${crd.spec.names.plural}.${cutroomGroup}`);
      expect(crd.spec.scope).to.equal('Namespaced');
      expect(crd.spec.names.categories).to.deep.equal(['cutroom']);
      expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).to.deep.equal([[cutroomVersion, true, true]]);
      for (const short of crd.spec.names.shortNames) {
        expect(builtinShortNames, short).to.not.include(short);
        expect(seen.has(short), short).to.equal(false);
        seen.add(short);
      }
    }
    expect(seen.size).to.equal(3);
  });

  it('each CRD schema is structural: a type at every level, no additionalProperties beside properties, no $schema', async () => {
    for (const crd of await committedCrds()) {
      const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
      for (const [path, node] of schemaNodes(schema, crd.spec.names.kind)) {
        expect(node['type'], `${path} has no type`).to.be.a('string');
        expect(node, path).to.not.have.any.keys('$schema', '$ref', 'definitions', '$defs', 'propertyNames', 'const', 'patternProperties');
        if (node['properties']) expect(node, `${path}: additionalProperties beside properties`).to.not.have.property('additionalProperties');
        if (node['x-kubernetes-preserve-unknown-fields']) expect(node['type']).to.equal('object');
      }
      expect(schema['required']).to.deep.equal(['spec']);
      const input = (((schema['properties'] as Record<string, StructuralSchema>)['spec']!['properties']) as Record<string, StructuralSchema>)['input']!;
      expect(input).to.deep.include({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    }
  });

  it('each CRD has the status subresource and PHASE, PROGRESS, PROJECT or MEDIA, AGE, and JOB at priority 1', async () => {
    for (const crd of await committedCrds()) {
      const v = crd.spec.versions[0]!;
      expect(v.subresources).to.deep.equal({ status: {} });
      const subject = crd.spec.names.kind === 'ArtifactJob' ? 'Media:.spec.mediaFileId' : 'Project:.spec.projectId';
      expect(v.additionalPrinterColumns.map((c) => `${c.name}:${c.jsonPath}`)).to.deep.equal([
        'Phase:.status.phase',
        'Progress:.status.progress',
        subject,
        'Age:.metadata.creationTimestamp',
        'Job:.status.jobName',
      ]);
      expect(v.additionalPrinterColumns.map((c) => c.priority ?? 0)).to.deep.equal([0, 0, 0, 0, 1]);
      // A column must point at a field the schema declares, or it stays empty forever.
      const properties = v.schema.openAPIV3Schema['properties'] as Record<string, { properties?: Record<string, unknown> }>;
      for (const c of v.additionalPrinterColumns.filter((c) => !c.jsonPath.startsWith('.metadata.'))) {
        const [, top, field] = c.jsonPath.split('.');
        expect(properties[top!]!.properties, c.jsonPath).to.have.property(field!);
      }
    }
  });

  it('the generator refuses zod constructs a CRD schema cannot express', () => {
    expect(() => structuralSchema(z.object({ tags: z.set(z.string()) }))).to.throw();
    expect(() => structuralSchema(z.object({ either: z.union([z.string(), z.number()]) }))).to.throw(/anyOf/);
    expect(() => structuralSchema(z.object({ anything: z.unknown() }))).to.throw(/no type/);
  });
});
