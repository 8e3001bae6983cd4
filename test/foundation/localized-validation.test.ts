import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { catalogs } from '../../api/src/i18n/catalogs.ts';
import { LOCALES } from '../../api/src/i18n/index.ts';

/**
 * The schemas' own messages (not zod's, which zod's locales translate): each one is
 * sent in a 422 inside the catalog's `request.validation` sentence, so each must be in
 * the request's language as the sentence around it is.
 */
const ENGLISH_MESSAGES = [
  'At most 16 flags',
  'a #rrggbb colour',
  'bytes of JSON',
  'must be an integer',
  'must be an ISO 639-1 code such as en',
  'must be a hex colour such as #fff or #1a2b3c',
  'give exactly one of user_id and email',
];

describe('a 422 is wholly in the language of the request', () => {
  let app: TestApp;
  let user: SignedIn;
  let admin: SignedIn;
  before(async () => {
    app = await startTestApp();
    [user, admin] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app, { superuser: true })]);
  });
  after(() => app.close());

  it('every key of every catalog is in every language, with the same placeholders', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
    const keys = new Set(LOCALES.flatMap((locale) => Object.keys(catalogs[locale])));
    for (const key of keys) {
      for (const locale of LOCALES) {
        const text = (catalogs[locale] as Record<string, string | undefined>)[key];
        expect(text, `${locale} ${key}`).to.be.a('string').and.not.empty;
        expect(placeholders(text!), `${locale} ${key}`).to.deep.equal(placeholders((catalogs.en as Record<string, string>)[key]!));
      }
    }
  });

  /** Each custom message, reached by a request that validation refuses before any lookup (random ids are fine). */
  const cases: [string, (language: string) => Promise<Response>][] = [
    ['canvas flags beyond 16', (language) =>
      user.client.patch(`/api/v1/projects/${randomUUID()}/canvases/${randomUUID()}`, { flags: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`f${i}`, true])) }, { headers: { 'Accept-Language': language } })],
    ['an export letterbox colour not #rrggbb', (language) =>
      user.client.post(`/api/v1/projects/${randomUUID()}/exports/`, { name: 'x', export_settings: { letterbox_background: 'red' } }, { headers: { 'Accept-Language': language } })],
    ["a media item's behavior_defaults too large", (language) =>
      user.client.patch(`/api/v1/media/${randomUUID()}`, { behavior_defaults: { big: 'x'.repeat(70_000) } }, { headers: { 'Accept-Language': language } })],
    ['a part number that is no integer', (language) =>
      user.client.get(`/api/v1/media/multipart/parts/urls?media_file_id=${randomUUID()}&from_part=one&to_part=2`, { headers: { 'Accept-Language': language } })],
    ["an analysis preset's language not ISO 639-1", (language) =>
      user.client.post('/api/v1/users/me/presets', { name: 'x', pacing_level: 50, false_start_sensitivity: 50, language: 'english', audio_clean: true, censorship_mode: 'none' }, { headers: { 'Accept-Language': language } })],
    ["a preview preset's colour not hex", (language) =>
      user.client.post('/api/v1/users/me/preview-presets', { name: 'x', format: '9:16', background: 'red', caption_style: 'bold', caption_font: 'Inter', caption_size: 48, caption_position: 'bottom', caption_color: '#fff', caption_length: 4 }, { headers: { 'Accept-Language': language } })],
    ['a beta grant naming both user_id and email', (language) =>
      admin.client.post('/api/v1/admin/beta/grant', { user_id: randomUUID(), email: 'a@example.test', credits: 5, renewal_date: '2027-01-01T00:00:00Z' }, { headers: { 'Accept-Language': language } })],
    ["an analysis's language not ISO 639-1", (language) =>
      user.client.post(`/api/v1/projects/${randomUUID()}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'english' }, { headers: { 'Accept-Language': language } })],
  ];

  for (const [situation, send] of cases) {
    it(`${situation}: 422 in pt and es without an English message, in en as before`, async () => {
      const english = await send('en');
      expect(english.status).to.equal(422);
      const englishBody = await json(english);
      const englishText = [englishBody.detail, ...englishBody.errors.map((error: { message: string }) => error.message)].join('\n');
      const found = ENGLISH_MESSAGES.filter((message) => englishText.includes(message));
      expect(found, englishText).to.have.length.greaterThan(0);
      for (const language of ['pt', 'es', 'pt-BR;q=1, en;q=0.5']) {
        const response = await send(language);
        expect(response.status).to.equal(422);
        const body = await json(response);
        const text = [body.detail, ...body.errors.map((error: { message: string }) => error.message)].join('\n');
        for (const message of found) expect(text, `${language}: ${text}`).to.not.include(message);
        expect(body.errors.length).to.equal(englishBody.errors.length);
      }
    });
  }
});
