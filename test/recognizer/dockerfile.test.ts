import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';

const ROOT = new URL('../../', import.meta.url);

/** recognizer/Dockerfile, read (no container engine here: the image is reviewed, not built). */
describe('the Whisper server image (recognizer/Dockerfile)', () => {
  let dockerfile: string;
  before(async () => {
    dockerfile = await readFile(new URL('recognizer/Dockerfile', ROOT), 'utf8');
  });

  it('copies only what exists in the repository', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(/\s+/));
    expect(sources).to.include.members(['recognizer/server', 'recognizer/cutroom_recognizer', 'recognizer/requirements.lock']);
    for (const source of sources) expect(existsSync(new URL(source, ROOT)), source).to.equal(true);
  });

  it('installs each lock with every hash checked and wheels only, then joins and checks the weights', () => {
    const installs = [...dockerfile.matchAll(/pip install ([^&;]+)-r ([^\s;]+)/g)];
    expect(installs.map((match) => match[2])).to.deep.equal(['/tmp/requirements.lock', '/tmp/requirements-cuda.lock']);
    for (const [, flags] of installs) expect(flags).to.include('--require-hashes').and.include('--no-deps').and.include('--only-binary=:all:');
    expect(dockerfile).to.match(/python -m cutroom_recognizer\.weights/);
  });

  it('runs the server the tests run, offline, from the environment it built, as a non-root user', () => {
    const command = /^CMD \["node", "([^"]+)"\]$/m.exec(dockerfile)?.[1];
    expect(command).to.equal('recognizer/server/server.ts');
    expect(existsSync(new URL(command!, ROOT))).to.equal(true);
    expect(dockerfile).to.match(/RECOGNIZER_PYTHON=\/opt\/recognizer\/bin\/python/).and.match(/COPY --from=python \/opt\/recognizer \/opt\/recognizer/);
    expect(dockerfile).to.match(/HF_HUB_OFFLINE=1/);
    expect(dockerfile).to.match(/^USER node$/m);
  });
});
