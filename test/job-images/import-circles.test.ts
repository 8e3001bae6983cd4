import { expect } from 'chai';
import { importCycles } from '../../hack/import-directions.ts';

describe('job images: import circles (hack/import-directions.ts)', () => {
  it('no module of job-images/ (or the contract it reads) reaches itself through its imports, `import type` included', async () => {
    expect(await importCycles(['job-images', 'crds'])).to.deep.equal([]);
  });
});
