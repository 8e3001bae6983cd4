import { spawnSync } from 'node:child_process';
import { expect } from 'chai';

describe('build', () => {
  it('the whole tree type-checks under strict TypeScript (the one build)', function () {
    this.timeout(120_000);
    const result = spawnSync('tsc', ['-p', 'tsconfig.json'], { encoding: 'utf8', timeout: 110_000 });
    expect(result.stdout + result.stderr).to.equal('');
    expect(result.status).to.equal(0);
  });
});
