import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { presetCalls, sharedPresetRules } from './preset-rules.ts';

const PRESETS = '/api/v1/users/me/preview-presets';

/** Every field a POST must carry; the flips default to false, as in the export's settings. */
function preset(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Shorts',
    format: '9:16',
    background: '#000',
    caption_style: 'bold',
    caption_font: 'Inter',
    caption_size: 48,
    caption_position: 'bottom',
    caption_color: '#FFCC00',
    caption_length: 4,
    ...overrides,
  };
}

describe('preview presets: /users/me/preview-presets', () => {
  let app: TestApp;
  let alice: SignedIn;
  let bob: SignedIn;

  before(async () => {
    app = await startTestApp();
    // Every answer of this file is checked against the served document; a violation fails the close (after).
    await failCloseOnContractViolations(app);
    [alice, bob] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app)]);
  });
  after(() => app.close());
  const { create, list } = presetCalls(PRESETS);

  it('POST → 201 with every field, video_flip_h and video_flip_v false by default; GET lists it', async () => {
    const user = await signUpAndLogin(app);
    const created = await create(user, preset());
    expect(created).to.deep.include({
      name: 'Shorts', format: '9:16', background: '#000', caption_style: 'bold', caption_font: 'Inter', caption_size: 48,
      caption_position: 'bottom', caption_color: '#FFCC00', caption_length: 4, video_flip_h: false, video_flip_v: false,
    });
    expect(created.uuid).to.be.a('string');
    expect(await list(user)).to.deep.equal([created]);
  });

  it('format is one of the export aspect ratios 16:9, 9:16, 1:1; caption_position top, middle or bottom', async () => {
    for (const [format, position] of [['16:9', 'top'], ['1:1', 'middle'], ['9:16', 'bottom']]) {
      const created = await create(alice, preset({ format, caption_position: position, video_flip_h: true, video_flip_v: true }));
      expect(created).to.include({ format, caption_position: position, video_flip_h: true, video_flip_v: true });
    }
  });

  it('POST with a field missing, an unknown key (is_default too), a format outside the export ratios, a colour not #rgb or #rrggbb, caption_size outside 8-200, caption_length outside 2-20 words, a caption_position other than top|middle|bottom → 422', async () => {
    const refused = [
      { name: 'x' },
      preset({ caption_position: undefined }),
      preset({ colour: 'red' }),
      preset({ is_default: true }),
      preset({ format: '4:3' }),
      preset({ background: 'black' }),
      preset({ background: '#12345' }),
      preset({ background: '#ggg' }),
      preset({ caption_color: 'fff' }),
      preset({ caption_color: '#ffffff00' }),
      preset({ caption_size: 7 }),
      preset({ caption_size: 201 }),
      preset({ caption_size: 12.5 }),
      preset({ caption_length: 1 }),
      preset({ caption_length: 21 }),
      preset({ caption_length: 'short' }),
      preset({ caption_position: 'left' }),
      preset({ caption_font: '' }),
      preset({ video_flip_h: 'true' }),
    ];
    for (const body of refused) {
      const response = await alice.client.post(PRESETS, body);
      expect(response.status, JSON.stringify(body)).to.equal(422);
      expect(await json(response)).to.include({ code: 'ValidationError' });
    }
  });

  it('PATCH any fields → 200, the others unchanged; an unknown key or a bound exceeded → 422', async () => {
    const user = await signUpAndLogin(app);
    const created = await create(user, preset());
    const response = await user.client.patch(`${PRESETS}/${created.uuid}`, { format: '16:9', caption_length: 8, background: '#1a2b3c', video_flip_v: true });
    expect(response.status).to.equal(200);
    const patched = await json(response);
    expect(patched).to.deep.include({ uuid: created.uuid, name: 'Shorts', format: '16:9', caption_length: 8, background: '#1a2b3c', video_flip_h: false, video_flip_v: true, caption_size: 48 });
    expect((await user.client.patch(`${PRESETS}/${created.uuid}`, { is_default: true })).status).to.equal(422);
    expect((await user.client.patch(`${PRESETS}/${created.uuid}`, { caption_size: 500 })).status).to.equal(422);
    expect(await list(user)).to.deep.equal([patched]);
  });

  it('GET lists oldest first; preview presets have no limit of 5', async () => {
    const user = await signUpAndLogin(app);
    for (const name of ['A', 'B', 'C', 'D', 'E', 'F']) await create(user, preset({ name }));
    expect((await list(user)).map((p) => p.name)).to.deep.equal(['A', 'B', 'C', 'D', 'E', 'F']);
  });

  sharedPresetRules(PRESETS, 'preview_presets', preset, () => ({ app, alice, bob }));
});
