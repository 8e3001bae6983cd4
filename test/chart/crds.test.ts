import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { asList, asMap, chartDir, repoRoot, strippedManifests, topLevelCrdFile } from './chart-files.ts';

const crdNames = ['analysisjobs.cutroom.dev.yaml', 'renderjobs.cutroom.dev.yaml', 'artifactjobs.cutroom.dev.yaml'];
const chartCrdsDir = join(chartDir, 'crds');
const manifestFile = /\.(ya?ml|json)$/;

describe('chart CRDs (charts/cutroom/crds holds copies of crds/)', () => {
  for (const name of crdNames) {
    it(`charts/cutroom/crds/${name} equals crds/${name}`, function () {
      const source = topLevelCrdFile(name);
      if (source === undefined) {
        console.warn(`      skipped: crds/${name} is not generated yet (run the CRD generator, then cp crds/*.yaml charts/cutroom/crds/)`);
        this.skip();
      }
      const copy = join(chartCrdsDir, name);
      expect(readdirSync(chartCrdsDir), `missing copy: cp crds/${name} charts/cutroom/crds/`).to.include(name);
      expect(readFileSync(copy, 'utf8'), `stale copy: cp crds/${name} charts/cutroom/crds/`).to.equal(readFileSync(source, 'utf8'));
    });
  }

  it('the chart carries no CRD that crds/ does not have', () => {
    const topLevel = new Set(readdirSync(join(repoRoot, 'crds')).filter((file) => manifestFile.test(file)));
    const extra = readdirSync(chartCrdsDir).filter((file) => manifestFile.test(file) && !topLevel.has(file));
    expect(extra).to.deep.equal([]);
  });

  it('every CRD crds/ generates is copied into the chart', () => {
    const copies = new Set(readdirSync(chartCrdsDir));
    const uncopied = readdirSync(join(repoRoot, 'crds')).filter((file) => manifestFile.test(file) && !copies.has(file));
    expect(uncopied).to.deep.equal([]);
  });

  it('the CRDs serve the plurals the chart grants, with a status subresource', function () {
    const present = crdNames.filter((name) => topLevelCrdFile(name) !== undefined);
    if (present.length === 0) {
      console.warn('      skipped: crds/ holds no generated CRD yet');
      this.skip();
    }
    const apiRole = strippedManifests('api/rbac.yaml').find((manifest) => manifest.kind === 'Role');
    const granted = asList(asMap(asList(asMap(apiRole).rules)[0]).resources);
    for (const name of present) {
      const crd = asMap(parse(readFileSync(join(repoRoot, 'crds', name), 'utf8')));
      const spec = asMap(crd.spec);
      expect(spec.group, name).to.equal('cutroom.dev');
      expect(granted, name).to.include(asMap(spec.names).plural);
      const versions = asList(spec.versions).map(asMap);
      expect(versions.some((version) => asMap(version.subresources).status !== undefined), `${name} status subresource`).to.equal(true);
    }
  });
});
