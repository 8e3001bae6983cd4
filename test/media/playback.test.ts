import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { makeVideo } from '../support/media.ts';
import { ManualClock } from '../support/clock.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { createItem, storeItem } from './library-fixtures.ts';

const SPRITE = { tile_width_px: 160, tile_height_px: 90, tiles_per_row: 10, total_tiles: 4, seconds_per_tile: 0.5 };

describe('playback proxy: GET /media/{media_item_id}/proxy and its signed URLs', () => {
  const clock = new ManualClock();
  let app: TestApp;
  let dir: string;
  let alice: SignedIn;
  let source: Buffer;
  let stored: Awaited<ReturnType<typeof storeItem>>;

  before(async () => {
    app = await startTestApp({}, { clock });
    dir = await mkdtemp(join(tmpdir(), 'cutroom-playback-'));
    alice = await signUpAndLogin(app);
    const clip = await makeVideo(dir, 'play.mp4', { seconds: 1 });
    source = await readFile(clip);
    stored = await storedUploaded(clip, 'video/mp4');
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A stored file the artifact job has finished with (only those play). */
  async function storedUploaded(path: string, contentType: string) {
    const stored = await storeItem(app, alice.user.id, path, contentType);
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: stored.file.id }, { status: 'UPLOADED' });
    return stored;
  }

  async function putObject(key: string, body: Buffer, contentType: string) {
    const { storage } = app.services;
    await storage.client.send(new PutObjectCommand({ Bucket: storage.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  async function playback(itemId: string) {
    const response = await alice.client.get(`/api/v1/media/${itemId}/proxy`);
    expect(response.status).to.equal(200);
    return json(response);
  }

  it('before the proxy exists: url plays the source, expires_in is MEDIA_TOKEN_TTL_SECONDS, sprite is null', async () => {
    const body = await playback(stored.item.id);
    expect(body.expires_in).to.equal(300);
    expect(body.sprite).to.equal(null);
    expect(body.url.startsWith(`${app.url}/api/v1/media/play/`)).to.equal(true);
    const full = await fetch(body.url);
    expect(full.status).to.equal(200);
    expect(Buffer.from(await full.arrayBuffer()).equals(source)).to.equal(true);
  });

  it('the URL redirects (302) to a presigned GET at the object store: bytes never cross the api', async () => {
    const body = await playback(stored.item.id);
    const response = await fetch(body.url, { redirect: 'manual' });
    expect(response.status).to.equal(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.origin).to.equal(new URL(process.env.S3_ENDPOINT!).origin);
    expect(location.searchParams.get('X-Amz-Signature')).to.be.a('string');
    // The presigned GET lives a little longer than the token.
    expect(Number(location.searchParams.get('X-Amz-Expires'))).to.be.within(301, 400);
  });

  it('attack: an object stored as text/html or image/svg+xml is still played as the file\'s allow-listed type, inline (never rendered as a page)', async () => {
    const html = await storedUploaded(await makeVideo(dir, 'html.mp4', { seconds: 1 }), 'video/mp4');
    await putObject(html.file.storageKey, Buffer.from('<script>alert(document.cookie)</script>'), 'text/html');
    const body = await playback(html.item.id);
    const response = await fetch(body.url);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('video/mp4');
    expect(response.headers.get('content-disposition')).to.equal('inline');
  });

  it('within the TTL a Range request follows to the real bytes → 206', async () => {
    const body = await playback(stored.item.id);
    clock.advance(290_000);
    const response = await fetch(body.url, { headers: { Range: 'bytes=0-99' } });
    expect(response.status).to.equal(206);
    expect(response.headers.get('content-range')).to.equal(`bytes 0-99/${source.length}`);
    expect(Buffer.from(await response.arrayBuffer()).equals(source.subarray(0, 100))).to.equal(true);
  });

  it('an expired playback token → 401 on a Range request (the client refetches /proxy)', async () => {
    const body = await playback(stored.item.id);
    clock.advance(301_000);
    const response = await fetch(body.url, { headers: { Range: 'bytes=0-99' }, redirect: 'manual' });
    expect(response.status).to.equal(401);
    expect((await json(response)).detail).to.match(/expired/);
    const fresh = await playback(stored.item.id);
    expect((await fetch(fresh.url, { headers: { Range: 'bytes=0-9' } })).status).to.equal(206);
  });

  it('a forged or malformed token → 401', async () => {
    const body = await playback(stored.item.id);
    const token = body.url.split('/').pop();
    const [header, payload] = token.split('.');
    for (const bad of [`${header}.${payload}.forged`, 'not-a-token']) {
      expect((await fetch(`${app.url}/api/v1/media/play/${bad}`, { headers: { Range: 'bytes=0-9' } })).status).to.equal(401);
    }
  });

  it('proxy_status ready: url plays the proxy; once the sprite exists it comes with its tile layout', async () => {
    const proxyBytes = Buffer.from('proxy-bytes-'.repeat(50));
    const spriteBytes = Buffer.from('sprite-jpeg-'.repeat(20));
    const proxyKey = `media/${stored.file.id}/proxy.mp4`;
    const spriteKey = `media/${stored.file.id}/sprite.jpg`;
    await putObject(proxyKey, proxyBytes, 'video/mp4');
    await putObject(spriteKey, spriteBytes, 'image/jpeg');
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: stored.file.id }, { status: 'UPLOADED', proxyStatus: 'ready', proxyKey, spriteKey, sprite: SPRITE });
    const body = await playback(stored.item.id);
    const played = await fetch(body.url, { headers: { Range: 'bytes=0-11' } });
    expect(played.status).to.equal(206);
    expect(await played.text()).to.equal('proxy-bytes-');
    expect(body.sprite).to.deep.include({ expires_in: 300, ...SPRITE });
    const sprite = await fetch(body.sprite.url);
    expect(sprite.status).to.equal(200);
    expect(Buffer.from(await sprite.arrayBuffer()).equals(spriteBytes)).to.equal(true);
  });

  it('sprite cache: the redirect to the short-lived presigned URL is private, no-store; only the object is public, max-age=31536000, immutable', async () => {
    const body = await playback(stored.item.id);
    const redirect = await fetch(body.sprite.url, { redirect: 'manual' });
    expect(redirect.status).to.equal(302);
    expect(redirect.headers.get('cache-control')).to.equal('private, no-store');
    expect(new URL(redirect.headers.get('location')!).searchParams.get('response-cache-control')).to.equal('public, max-age=31536000, immutable');
    const object = await fetch(body.sprite.url);
    expect(object.status).to.equal(200);
    expect(object.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    await object.arrayBuffer();
  });

  it("another user's item → 404; an upload not confirmed yet → 409; no session → 401", async () => {
    const bob = await signUpAndLogin(app);
    expect((await bob.client.get(`/api/v1/media/${stored.item.id}/proxy`)).status).to.equal(404);
    const { item } = await createItem(app, alice.user.id, { file: { status: 'PENDING' } });
    expect((await alice.client.get(`/api/v1/media/${item.id}/proxy`)).status).to.equal(409);
    expect((await app.fetch(`/api/v1/media/${stored.item.id}/proxy`)).status).to.equal(401);
  });

  it('the thumbnail gets a URL the client fetches: image/jpeg, cacheable, the same URL within a token window (issue 22)', async () => {
    const key = `jobs/artifact/${stored.file.id}/thumbnail.jpg`;
    const jpeg = Buffer.from('a thumbnail, as bytes');
    await putObject(key, jpeg, 'application/octet-stream');
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: stored.file.id }, { thumbnailKey: key });
    const [first, second] = [await playback(stored.item.id), await playback(stored.item.id)];
    expect(first.thumbnail.url.startsWith(`${app.url}/api/v1/media/play/`)).to.equal(true);
    expect(second.thumbnail.url, 'one URL per token window, so browsers cache it').to.equal(first.thumbnail.url);
    expect(first.thumbnail.expires_in).to.be.within(300, 600);
    const redirect = await fetch(first.thumbnail.url, { redirect: 'manual' });
    expect(redirect.status).to.equal(302);
    expect(redirect.headers.get('cache-control')).to.match(/^private, max-age=\d+$/);
    const image = await fetch(first.thumbnail.url);
    expect(image.status).to.equal(200);
    expect(image.headers.get('content-type')).to.equal('image/jpeg');
    expect(image.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(Buffer.from(await image.arrayBuffer()).equals(jpeg)).to.equal(true);
    clock.advance(600_000);
    expect((await playback(stored.item.id)).thumbnail.url, 'a later window, a new URL').to.not.equal(first.thumbnail.url);
  });

  it('a file still processing → 409 saying so, never a URL redirecting to an object not written yet (issue 22)', async () => {
    const { item } = await createItem(app, alice.user.id, { file: { status: 'PROCESSING' } });
    const response = await alice.client.get(`/api/v1/media/${item.id}/proxy`);
    expect(response.status).to.equal(409);
    expect((await json(response)).detail).to.match(/being processed/);
  });
});
