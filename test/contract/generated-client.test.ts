import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { createAccount } from '../support/users.ts';
import { makeVideo } from '../support/media.ts';

const run = promisify(execFile);

/** What hack/api-client/journey.ts answers (its JourneyOutcome). */
interface JourneyOutcome {
  projectUuid: string;
  mediaItemId: string;
  mediaFileId: string;
  listedItemIds: string[];
  spineItemIds: string[];
  refusedDetail: string;
}
const ROOT = join(import.meta.dirname, '../..');
const CLIENT_DIR = join(ROOT, 'hack/api-client');
const GENERATED = join(CLIENT_DIR, 'generated');
const OPENAPI_TYPESCRIPT = join(CLIENT_DIR, 'node_modules/openapi-typescript/bin/cli.js');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

/**
 * A client generated from the served document by openapi-typescript (types) with
 * openapi-fetch (runtime): generated fresh each run (hack/api-client/generated/ is not
 * committed, so whatever the document gains is in it), type-checked strictly with the
 * journey that uses it, then the journey runs against the app.
 */
describe('a TypeScript client generated from the document', () => {
  let app: TestApp;
  let dir: string;
  before(async function () {
    this.timeout(120_000);
    app = await startTestApp();
    dir = await mkdtemp(join(tmpdir(), 'cutroom-client-'));
    await mkdir(GENERATED, { recursive: true });
    await writeFile(join(GENERATED, 'openapi.json'), JSON.stringify(await json(await app.fetch('/api/v1/openapi.json'))));
    await run(process.execPath, [OPENAPI_TYPESCRIPT, join(GENERATED, 'openapi.json'), '--output', join(GENERATED, 'schema.ts')], { cwd: CLIENT_DIR });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('openapi-typescript generates types with every operation of the document', async () => {
    const schema = await readFile(join(GENERATED, 'schema.ts'), 'utf8');
    const document = JSON.parse(await readFile(join(GENERATED, 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    for (const [path, operations] of Object.entries(document.paths)) {
      expect(schema, path).to.include(`"${path}": {`);
      for (const operation of Object.values(operations)) expect(schema, operation.operationId).to.include(`${operation.operationId}: {`);
    }
  });

  it('the journey over the generated types compiles under strict TypeScript', async function () {
    this.timeout(120_000);
    const { stdout, stderr } = await run(TSC, ['-p', join(CLIENT_DIR, 'tsconfig.json')]).catch((failure: { stdout?: string; stderr?: string }) => ({
      stdout: failure.stdout ?? 'tsc failed',
      stderr: failure.stderr ?? '',
    }));
    expect(stdout + stderr).to.equal('');
  });

  it('runs: log in, create a project, presign, PUT, confirm, list media and the spine, log out', async function () {
    this.timeout(60_000);
    const account = await createAccount(app, { tier: 'Creator' });
    const video = await readFile(await makeVideo(dir, 'client.mp4', { seconds: 1, width: 160, height: 90 }));
    // Not a static import: journey.ts is type-checked with the generated types only (the test above).
    const { runJourney } = (await import(join(CLIENT_DIR, 'journey.ts'))) as { runJourney: (input: object) => Promise<JourneyOutcome> };
    const outcome = await runJourney({ baseUrl: app.url, username: account.username, password: account.password, video });
    expect(outcome.listedItemIds).to.deep.equal([outcome.mediaItemId]);
    expect(outcome.spineItemIds).to.deep.equal([outcome.mediaItemId]);
    expect(outcome.refusedDetail).to.be.a('string').and.not.empty;
    const file = await app.services.orm.em.fork().getConnection().execute('select status from media_files where id = ?', [outcome.mediaFileId]);
    expect(file[0]?.status).to.be.oneOf(['PROCESSING', 'UPLOADED']);
  });
});
