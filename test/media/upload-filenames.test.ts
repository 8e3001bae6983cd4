import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { isPlainFilename } from '../../api/src/media/uploads/content-types.ts';

describe('upload file names: only ".." as a whole path segment is a dot segment', () => {
  it('isPlainFilename: dots inside a name are plain; ".", "..", separators and control characters are not', () => {
    for (const name of ['my..video.mp4', '..hidden.mp4', 'clip...mp4', 'a . b.mp4', '.profile.mp4']) expect(isPlainFilename(name), name).to.equal(true);
    for (const name of ['..', '.', ' .. ', '../x.mp4', 'a/../b.mp4', 'a\\..\\b.mp4', 'x/..', 'a\u0000.mp4', '']) expect(isPlainFilename(name), JSON.stringify(name)).to.equal(false);
  });

  describe('POST /media/presign', () => {
    let app: TestApp;
    let user: SignedIn;
    before(async () => {
      app = await startTestApp();
      user = await signUpAndLogin(app);
    });
    after(() => app.close());

    const presign = (filename: string) => user.client.post('/api/v1/media/presign', { filename, content_type: 'video/mp4', size_bytes: 1024, scope: 'library' });

    it('a file named my..video.mp4 → 201, the name kept as given', async () => {
      const response = await presign('my..video.mp4');
      expect(response.status, await response.clone().text()).to.equal(201);
      const view = await json(await user.client.get(`/api/v1/media/${(await json(response)).media_item_id}`));
      expect(view.original_filename).to.equal('my..video.mp4');
    });

    it('a file named ".." or with a ../ path → 422', async () => {
      for (const filename of ['..', '../video.mp4', 'videos/../video.mp4']) expect((await presign(filename)).status, filename).to.equal(422);
    });
  });
});
