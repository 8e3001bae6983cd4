import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startEmbeddedS3, type EmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { mb } from '../../hack/fixtures/units.ts';
import { launchChromium } from '../support/browser.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createAccount, type TestAccount } from '../support/users.ts';

/** What the page reports of one upload: each step's status, and the file's size as confirm or complete measured it. */
interface PageUpload {
  steps: Record<string, number>;
  sizeBytes?: number;
  error?: string;
}

describe('the embedded default works from a browser: a page on the api\'s origin uploads to the embedded store (CORS), and the reference page\'s "Try it out" sends the CSRF header', function () {
  this.timeout(120_000);
  let dir: string;
  let store: EmbeddedS3;
  let app: TestApp;
  let browser: Browser;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-browser-'));
    const secretAccessKey = randomBytes(24).toString('base64url');
    // The api's port is known only once it listens: the rule names its origin with a port wildcard.
    store = await startEmbeddedS3({ directory: join(dir, 's3'), bucket: 'browser-uploads', secretAccessKey, corsOrigins: ['http://127.0.0.1:*'] });
    app = await startTestApp({
      S3_ENDPOINT: store.endpoint,
      S3_BUCKET: store.bucket,
      S3_SECRET_ACCESS_KEY: secretAccessKey,
      MULTIPART_CUTOFF_BYTES: String(mb(6)),
      MULTIPART_PART_SIZE_BYTES: String(mb(5)),
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A page of the api's origin standing for a front end served there. The api's own pages allow
   * no fetch to another origin (their CSP), a front end's CSP names the store: so the CSP is
   * bypassed here. (A page fulfilled by the test itself would have no address, and Chromium
   * refuses requests from such a "public" page to loopback.) The page is the health check's:
   * the reference page would keep the page's thread busy for seconds rendering the OpenAPI document.
   */
  const frontEndPage = async (): Promise<Page> => {
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    page.once('close', () => void context.close());
    await page.goto(`${app.url}/healthz`);
    return page;
  };

  /** Logs in from the page, then uploads `size` random bytes the way a front end does: presign and PUT, or initiate, PUT each part and complete. */
  const uploadFromPage = (page: Page, account: TestAccount, size: number): Promise<PageUpload> =>
    page.evaluate(
      async ({ username, password, size }) => {
        const steps: Record<string, number> = {};
        const bytes = new Uint8Array(size);
        for (let at = 0; at < size; at += 65536) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65536)));
        const login = await fetch('/api/v1/auth/login', { method: 'POST', body: new URLSearchParams({ username, password }) });
        steps.login = login.status;
        const { csrf_token: csrf } = (await login.json()) as { csrf_token: string };
        const post = (path: string, body: unknown) =>
          fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify(body) });
        const file = { filename: 'from-browser.mp4', content_type: 'video/mp4', size_bytes: size, scope: 'library' };
        try {
          if (size < 6 * 1024 * 1024) {
            const presigned = await post('/api/v1/media/presign', file);
            steps.presign = presigned.status;
            const { media_file_id: id, upload_url: url } = (await presigned.json()) as { media_file_id: string; upload_url: string };
            steps.put = (await fetch(url, { method: 'PUT', headers: { 'Content-Type': 'video/mp4' }, body: bytes })).status;
            const confirmed = await post(`/api/v1/media/${id}/confirm`, {});
            steps.confirm = confirmed.status;
            return { steps, sizeBytes: ((await confirmed.json()) as { size_bytes: number }).size_bytes };
          }
          const initiated = await post('/api/v1/media/multipart/initiate', file);
          steps.initiate = initiated.status;
          const started = (await initiated.json()) as { media_file_id: string; part_size_bytes: number; parts: { part_number: number; url: string }[] };
          const parts: { part_number: number; etag: string }[] = [];
          for (const part of started.parts) {
            const from = (part.part_number - 1) * started.part_size_bytes;
            const answer = await fetch(part.url, { method: 'PUT', body: bytes.subarray(from, from + started.part_size_bytes) });
            steps[`part ${part.part_number}`] = answer.status;
            // Readable only when the bucket's CORS rule exposes it.
            parts.push({ part_number: part.part_number, etag: answer.headers.get('ETag') ?? '' });
          }
          const completed = await post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts });
          steps.complete = completed.status;
          return { steps, sizeBytes: ((await completed.json()) as { size_bytes: number }).size_bytes };
        } catch (error) {
          return { steps, error: String(error) };
        }
      },
      { username: account.username, password: account.password, size },
    );

  it('a presigned single PUT from the page → 200, and confirm measures the uploaded bytes', async () => {
    const page = await frontEndPage();
    try {
      const upload = await uploadFromPage(page, await createAccount(app), 300_000);
      expect(upload).to.deep.equal({ steps: { login: 200, presign: 201, put: 200, confirm: 200 }, sizeBytes: 300_000 });
    } finally {
      await page.close();
    }
  });

  it('a multipart upload from the page: each part PUT → 200 with its ETag readable, and complete with them → 200', async () => {
    const page = await frontEndPage();
    try {
      const size = mb(7);
      const upload = await uploadFromPage(page, await createAccount(app), size);
      expect(upload).to.deep.equal({ steps: { login: 200, initiate: 201, 'part 1': 200, 'part 2': 200, complete: 200 }, sizeBytes: size });
    } finally {
      await page.close();
    }
  });

  it('"Try it out" on the reference page after login: a POST sends the CSRF header and succeeds (201)', async () => {
    const account = await createAccount(app);
    const page = await browser.newPage();
    try {
      await page.goto(`${app.url}/api/v1/docs`);
      const login = await page.evaluate(
        async ({ username, password }) => (await fetch('/api/v1/auth/login', { method: 'POST', body: new URLSearchParams({ username, password }) })).status,
        { username: account.username, password: account.password },
      );
      expect(login).to.equal(200);
      const operation = page.locator('.opblock-post', { has: page.locator('[data-path="/api/v1/projects/"]') }).first();
      await operation.locator('.opblock-summary').click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      await operation.locator('textarea.body-param__text').fill(JSON.stringify({ name: 'From the reference page' }));
      await operation.getByRole('button', { name: 'Execute' }).click();
      const status = operation.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      expect((await status.innerText()).trim()).to.equal('201');
    } finally {
      await page.close();
    }
  });
});
