import { expect } from 'chai';
import { importViolations } from '../../hack/import-directions.ts';

describe('architecture: import directions (hack/import-directions.ts)', () => {
  it('job images import nothing from the api, services nothing from http/, http/ no feature, and the operator reaches no HTTP layer', async () => {
    expect(await importViolations()).to.deep.equal([]);
  });
});
