import { expect } from 'chai';
import { z } from 'zod';
import { json, startTestApp } from '../support/harness.ts';
import type { ApiRouter } from '../../api/src/http/router.ts';

function whoAmI(router: ApiRouter): void {
  router.add({
    method: 'get',
    path: '/api/v1/test/ip',
    summary: 'The client address as the api sees it.',
    tags: ['test'],
    access: 'public',
    responses: { 200: { description: 'Address', schema: z.object({ ip: z.string() }) } },
    handler: (ctx) => {
      ctx.body = { ip: ctx.ip };
    },
  });
}

describe('client address behind a proxy', () => {
  it("with TRUST_PROXY the client address is the trusted hop's entry; entries the client wrote are ignored", async () => {
    const app = await startTestApp({ TRUST_PROXY: 'true', TRUSTED_PROXY_HOPS: '1' }, {}, { extend: whoAmI });
    try {
      const spoofed = await app.fetch('/api/v1/test/ip', { headers: { 'X-Forwarded-For': '6.6.6.6, 203.0.113.7' } });
      expect(await json(spoofed)).to.deep.equal({ ip: '203.0.113.7' });
      const another = await app.fetch('/api/v1/test/ip', { headers: { 'X-Forwarded-For': '7.7.7.7, 203.0.113.7' } });
      expect(await json(another)).to.deep.equal({ ip: '203.0.113.7' });
    } finally {
      await app.close();
    }
  });

  it('without TRUST_PROXY, X-Forwarded-For is not believed at all', async () => {
    const app = await startTestApp({ TRUST_PROXY: 'false' }, {}, { extend: whoAmI });
    try {
      const response = await app.fetch('/api/v1/test/ip', { headers: { 'X-Forwarded-For': '6.6.6.6' } });
      expect((await json(response)).ip).to.not.equal('6.6.6.6');
    } finally {
      await app.close();
    }
  });
});
