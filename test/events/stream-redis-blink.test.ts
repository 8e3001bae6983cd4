import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { dataOf, isEvent, openSse } from '../support/sse-stream.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { eventually } from '../support/wait.ts';

describe('event streams across a Redis blink', function () {
  this.timeout(30_000);
  let proxy: TcpProxy;
  let app: TestApp;

  before(async () => {
    const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
    proxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
    const throughProxy = new URL(redis);
    throughProxy.hostname = '127.0.0.1';
    throughProxy.port = String(proxy.port);
    app = await startTestApp({ REDIS_URL: throughProxy.toString(), SSE_KEEPALIVE_SECONDS: '30' });
  });
  after(async () => {
    proxy.restore();
    await app.close();
    await proxy.close();
  });

  it('the subscriber connection drops: the open stream ends (the client reconnects) rather than stays open on a channel no longer subscribed; a stream opened after Redis is back receives its events', async () => {
    const { user, client } = await signUpAndLogin(app);
    const stream = await openSse(client, '/api/v1/user-stream');
    try {
      expect(stream.response.status).to.equal(200);
      await stream.next((frame) => frame === ': connected', 5000);
      proxy.cut();
      await stream.ended(5000);
    } finally {
      stream.close();
    }
    proxy.restore();
    const again = await eventually(async () => {
      const reopened = await openSse(client, '/api/v1/user-stream');
      if (reopened.response.status === 200) return reopened;
      reopened.close();
      return undefined;
    }, 'a stream answering 200 once Redis is back', 15_000, 200);
    try {
      await again.next((frame) => frame === ': connected', 5000);
      const data = { media_file_uuid: user.id, media_item_uuid: user.id, display_name: 'after the blink', proxy_status: 'ready' };
      await app.services.bus.publishToUser(user.id, { type: 'media_ready', data });
      expect(dataOf(await again.next(isEvent('media_ready'), 5000)).display_name).to.equal('after the blink');
    } finally {
      again.close();
    }
  });
});
