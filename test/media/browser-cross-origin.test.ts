import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { startEmbeddedS3, type EmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { launchChromium } from '../support/browser.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { signUpAndLogin } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

/** A front end's page on an origin of its own: a tiny static server on another loopback port. */
async function startFrontEnd(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>A front end on another origin</title><p>front end</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const stop = (server: Server | undefined) => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));

/** What the page saw at each step. */
interface CrossOriginJourney {
  steps: Record<string, number>;
  /** RateLimit as the page could read it (exposed by CORS). */
  rateLimit?: string | null;
  mediaItemId?: string;
  listed?: string[];
  /** The signing secret of the webhook endpoint the page registered with the key. */
  webhookSecret?: string;
  error?: string;
}

describe('a front end on another origin (issue 24 item 5): with an API key, a page of a listed origin registers a webhook, presigns, PUTs to the embedded store from the browser and confirms; the media.ready webhook arrives signed', function () {
  this.timeout(120_000);
  let dir: string;
  let store: EmbeddedS3;
  let app: TestApp;
  let browser: Browser;
  let frontEnd: { origin: string; server: Server };
  let stranger: { origin: string; server: Server };
  let receiver: WebhookReceiver;
  let video: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-cross-origin-'));
    frontEnd = await startFrontEnd();
    stranger = await startFrontEnd();
    receiver = await WebhookReceiver.start();
    video = (await readFile(await makeVideo(dir, 'from-another-origin.mp4', { seconds: 2 }))).toString('base64');
    const secretAccessKey = randomBytes(24).toString('base64url');
    // The store answers CORS for the same listed origin as the api (hack/embedded-s3/main.ts does so from CORS_ALLOWED_ORIGINS).
    store = await startEmbeddedS3({ directory: join(dir, 's3'), bucket: 'cross-origin', secretAccessKey, corsOrigins: [frontEnd.origin] });
    app = await startTestApp({
      S3_ENDPOINT: store.endpoint,
      S3_BUCKET: store.bucket,
      S3_SECRET_ACCESS_KEY: secretAccessKey,
      CORS_ALLOWED_ORIGINS: frontEnd.origin,
      JOB_BACKEND: 'local',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_MS: '100',
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await store?.close();
    await receiver?.close();
    await Promise.all([stop(frontEnd?.server), stop(stranger?.server)]);
    await rm(dir, { recursive: true, force: true });
  });

  /** A key made by the test through the api (the page itself never signs in nor holds a cookie of the api). */
  async function newKey(): Promise<string> {
    const user = await signUpAndLogin(app);
    const created = await user.client.post('/api/v1/users/me/api-keys', { name: 'front end on another origin', scopes: ['read', 'write'] });
    expect(created.status).to.equal(201);
    return ((await created.json()) as { key: string }).key;
  }

  async function pageOf(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  /**
   * Register a webhook endpoint, presign, PUT from the browser to the presigned URL, confirm,
   * then list the library: every call to the api with the key alone. The file is a real MP4
   * (base64), or `size` random bytes when none is given.
   */
  const journey = (page: Page, api: string, key: string, file: { size: number; base64?: string; hookUrl?: string }): Promise<CrossOriginJourney> =>
    page.evaluate(
      async ({ api, key, file }) => {
        const steps: Record<string, number> = {};
        const call = (path: string, init: RequestInit = {}) =>
          fetch(`${api}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers } });
        try {
          let webhookSecret: string | undefined;
          if (file.hookUrl) {
            const hook = await call('/api/v1/users/me/webhooks', { method: 'POST', body: JSON.stringify({ url: file.hookUrl, event_types: ['media.ready', 'media.failed'] }) });
            steps.webhook = hook.status;
            webhookSecret = ((await hook.json()) as { secret: string }).secret;
          }
          const bytes = file.base64 ? Uint8Array.from(atob(file.base64), (char) => char.charCodeAt(0)) : new Uint8Array(file.size);
          if (!file.base64) for (let at = 0; at < file.size; at += 65536) crypto.getRandomValues(bytes.subarray(at, Math.min(file.size, at + 65536)));
          const presigned = await call('/api/v1/media/presign', {
            method: 'POST',
            body: JSON.stringify({ filename: 'from-another-origin.mp4', content_type: 'video/mp4', size_bytes: bytes.length, scope: 'library' }),
          });
          steps.presign = presigned.status;
          const rateLimit = presigned.headers.get('RateLimit');
          const upload = (await presigned.json()) as { media_file_id: string; media_item_id: string; upload_url: string };
          steps.put = (await fetch(upload.upload_url, { method: 'PUT', headers: { 'Content-Type': 'video/mp4' }, body: bytes })).status;
          steps.confirm = (await call(`/api/v1/media/${upload.media_file_id}/confirm`, { method: 'POST', body: '{}' })).status;
          const library = await call('/api/v1/media');
          steps.list = library.status;
          const listed = ((await library.json()) as { data: { uuid: string }[] }).data.map((item) => item.uuid);
          return { steps, rateLimit, mediaItemId: upload.media_item_id, listed, ...(webhookSecret ? { webhookSecret } : {}) };
        } catch (error) {
          return { steps, error: String(error) };
        }
      },
      { api, key, file },
    );

  it('webhook endpoint 201, presign 201, browser PUT 200, confirm 200; the item is in the library; the page reads the RateLimit field; media.ready arrives at the local receiver, verified by standardwebhooks', async () => {
    const key = await newKey();
    const page = await pageOf(frontEnd.origin);
    const hookPath = `/hooks/${randomBytes(6).toString('hex')}`;
    let seen: CrossOriginJourney;
    try {
      seen = await journey(page, app.url, key, { size: 0, base64: video, hookUrl: `http://127.0.0.1:${receiver.port}${hookPath}` });
      expect(seen.error, JSON.stringify(seen)).to.equal(undefined);
      expect(seen.steps).to.deep.equal({ webhook: 201, presign: 201, put: 200, confirm: 200, list: 200 });
      expect(seen.listed).to.include(seen.mediaItemId);
      expect(seen.rateLimit).to.match(/^"api-key";r=\d+;t=\d+$/);
    } finally {
      await page.close();
    }
    // The object arrived whole in the store, through the browser.
    const objects = await fetch(`${app.url}/api/v1/media`, { headers: { Authorization: `Bearer ${key}` } });
    const [item] = ((await objects.json()) as { data: { size_bytes: number | null }[] }).data;
    expect(item?.size_bytes).to.equal(Buffer.from(video, 'base64').length);
    // The media.ready webhook for that item, signed with the secret the page was given.
    const webhook = new Webhook(seen.webhookSecret!);
    const event = await eventually(async () => {
      for (const request of receiver.received.filter((candidate) => candidate.url === hookPath)) {
        const verified = webhook.verify(request.body, request.headers as Record<string, string>) as { type: string; data: { media_item_uuid: string } };
        if (verified.type === 'media.ready' && verified.data.media_item_uuid === seen.mediaItemId) return verified;
      }
      return undefined;
    }, 'a verified media.ready webhook', 90_000);
    expect(event.data.media_item_uuid).to.equal(seen.mediaItemId);
  });

  it('a page of an origin not listed cannot read the api: the browser refuses the answer (no CORS header)', async () => {
    const key = await newKey();
    const page = await pageOf(stranger.origin);
    try {
      const seen = await journey(page, app.url, key, { size: 1_000 });
      expect(seen.steps).to.deep.equal({});
      expect(seen.error).to.match(/Failed to fetch/);
    } finally {
      await page.close();
    }
  });
});
