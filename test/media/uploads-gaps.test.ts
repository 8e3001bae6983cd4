import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ListPartsCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { mb } from '../../hack/fixtures/units.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { makeAudio } from '../support/media.ts';
import { putParts } from '../support/media-upload.ts';
import { chargeStorage, storageUsed } from '../../api/src/accounts/storage-usage.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { createUploads } from '../../api/src/media/uploads/feature.ts';

const PART = mb(5);

describe('media uploads: multipart parts listing, first part URLs and racing completes', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-multipart-gaps-'));
    // 5 MiB parts from 1 MiB on: a 2 MiB file is one real part, declared sizes reach 60 parts
    app = await startTestApp({ JOB_BACKEND: 'local', MULTIPART_PART_SIZE_BYTES: String(PART), MULTIPART_CUTOFF_BYTES: String(mb(1)) });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const em = () => app.services.orm.em.fork();
  const used = (account: SignedIn) => storageUsed(em(), account.user.id);

  async function initiate(account: SignedIn, sizeBytes: number, filename = 'long.wav') {
    const answer = await account.client.post('/api/v1/media/multipart/initiate', { filename, content_type: 'audio/wav', size_bytes: sizeBytes, scope: 'library' });
    expect(answer.status, await answer.clone().text()).to.equal(201);
    return json(answer);
  }

  it('the parts listing follows the store\'s pages: page size 2, 5 uploaded parts → all 5 in order', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account, 5 * PART);
    expect(started.parts_count).to.equal(5);
    // only complete checks part sizes, so small distinct bodies are enough to list; the part URLs sign the full part length, so they are written with the service's credentials
    const { client: s3, bucket } = app.services.storage;
    const etags: string[] = [];
    for (const part of started.parts as { part_number: number; url: string }[]) {
      const written = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: started.key, UploadId: started.upload_id, PartNumber: part.part_number, Body: new Uint8Array(randomBytes(1024 + part.part_number)) }));
      etags.push(written.ETag!);
    }

    const firstPage = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: started.key, UploadId: started.upload_id, MaxParts: 2 }));
    expect([firstPage.Parts?.length, firstPage.IsTruncated], 'the store pages at max-parts').to.deep.equal([2, true]);

    const { uploads } = createUploads(app.services, app.services.features.projects, { partsPageSize: 2 });
    const pages: (number | undefined)[] = [];
    const send = s3.send.bind(s3);
    s3.send = ((command: { input: { MaxParts?: number } }, ...rest: unknown[]) => {
      if (command instanceof ListPartsCommand) pages.push(command.input.MaxParts);
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof s3.send;
    let listed;
    try {
      listed = await uploads.uploadedParts(em(), account.user.id, started.media_file_id);
    } finally {
      s3.send = send;
    }
    expect(pages, 'three pages of at most 2').to.deep.equal([2, 2, 2]);
    expect(listed.map((part) => [part.part_number, part.etag, part.size_bytes])).to.deep.equal(etags.map((etag, index) => [index + 1, etag, 1024 + index + 1]));
  });

  it('initiate of more than 50 parts returns exactly the first 50 part URLs and the right parts_count', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account, 60 * PART - 123);
    expect(started.parts_count).to.equal(60);
    expect(started.parts.map((part: { part_number: number }) => part.part_number)).to.deep.equal(Array.from({ length: 50 }, (_, index) => index + 1));
    expect(new Set(started.parts.map((part: { url: string }) => part.url)).size).to.equal(50);
    const rest = await json(await account.client.get(`/api/v1/media/multipart/parts/urls?media_file_id=${started.media_file_id}&from_part=51&to_part=60`));
    expect(rest.parts.map((part: { part_number: number }) => part.part_number)).to.deep.equal(Array.from({ length: 10 }, (_, index) => index + 51));
  });

  it('quota under concurrency: two completes racing for the last bytes cannot both pass (one 200, the other 400 with its file FAILED and object deleted)', async () => {
    const account = await signUpAndLogin(app);
    const files = [await makeAudio(dir, 'race-a.wav', { seconds: 12 }), await makeAudio(dir, 'race-b.wav', { seconds: 13 })];
    const sizes = await Promise.all(files.map(async (file) => (await stat(file)).size));
    const uploads = [];
    for (const [index, file] of files.entries()) {
      const started = await initiate(account, sizes[index]!, `race-${index}.wav`);
      const etags = await putParts(account.client, file, started.media_file_id, started.part_size_bytes, started.parts_count, started.parts);
      uploads.push({ started, etags });
    }
    const quota = (await app.services.billing.limitsOf(em(), account.user.id)).storageQuotaBytes;
    // room for the larger of the two, not for both
    await chargeStorage(em(), account.user.id, quota - (await used(account)) - Math.max(...sizes), quota);
    const before = await used(account);

    const answers = await Promise.all(uploads.map(({ started, etags }) => account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags })));
    expect(answers.map((answer) => answer.status).sort()).to.deep.equal([200, 400]);
    const winner = answers[0]!.status === 200 ? 0 : 1;
    const loser = 1 - winner;
    expect(await json(answers[loser]!)).to.include({ code: 'ValidationError' });
    expect(await used(account)).to.equal(before + sizes[winner]!);
    expect(await used(account)).to.be.at.most(quota);

    const lost = uploads[loser]!.started;
    expect((await em().findOneOrFail(MediaFile, lost.media_file_id)).status).to.equal('FAILED');
    expect(await app.services.storage.sizeOf(lost.key), 'the losing object is deleted').to.equal(null);
    expect((await em().findOneOrFail(MediaItem, lost.media_item_id)).chargedBytes).to.equal(0);
    expect((await em().findOneOrFail(MediaItem, uploads[winner]!.started.media_item_id)).chargedBytes).to.equal(sizes[winner]);
  });
});
