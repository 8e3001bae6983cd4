import { expect } from 'chai';
import { parseList, type Item } from 'structured-headers';
import { json } from '../support/harness.ts';
import { randomBytes } from 'node:crypto';
import { Client, createAccount } from '../support/users.ts';
import { newSignup, randomIp, startAccountsApp, type AccountsTestApp } from '../accounts/fixtures.ts';

/** A RateLimit or RateLimit-Policy field, parsed as the structured-field list the draft defines: policy name → its parameters. */
function fieldOf(response: Response, name: 'RateLimit' | 'RateLimit-Policy'): Record<string, Record<string, unknown>> {
  const value = response.headers.get(name);
  if (value === null) throw new Error(`no ${name} field`);
  const items = parseList(value) as Item[];
  return Object.fromEntries(items.map(([policy, parameters]) => [String(policy), Object.fromEntries(parameters)]));
}

async function keyOf(fixture: AccountsTestApp, scopes = ['read', 'write']): Promise<{ key: string; login: Client }> {
  const account = await createAccount(fixture.app);
  const login = fixture.client();
  expect((await login.logIn(account.username, account.password)).status).to.equal(200);
  const created = await login.post('/api/v1/users/me/api-keys', { name: 'limits', scopes });
  expect(created.status).to.equal(201);
  return { key: ((await created.json()) as { key: string }).key, login };
}

describe('rate limits (issue 24 items 1 and 4): per key and per address, announced in RateLimit and RateLimit-Policy, Retry-After on every 429', function () {
  this.timeout(60_000);

  describe('per API key (RATE_LIMIT_PER_API_KEY)', () => {
    let fixture: AccountsTestApp;
    before(async () => {
      fixture = await startAccountsApp({ RATE_LIMIT_PER_API_KEY: '5', RATE_LIMIT_PER_IP: '1000', RATE_LIMIT_WINDOW_SECONDS: '60' });
    });
    after(async () => {
      await fixture?.close();
    });

    it('each answer names the policy ("api-key";q=5;w=60) and what is left (r decreasing to 0, t within the window); the 6th → 429 with Retry-After', async () => {
      const { key, login } = await keyOf(fixture);
      const withKey = fixture.client({ Authorization: `Bearer ${key}` });
      const remaining: unknown[] = [];
      for (let request = 0; request < 5; request++) {
        const response = await withKey.get('/api/v1/projects/');
        expect(response.status).to.equal(200);
        expect(fieldOf(response, 'RateLimit-Policy')).to.deep.equal({ ip: { q: 1000, w: 60 }, 'api-key': { q: 5, w: 60 } });
        const left = fieldOf(response, 'RateLimit')['api-key']!;
        expect(left.t).to.be.within(1, 60);
        remaining.push(left.r);
      }
      expect(remaining).to.deep.equal([4, 3, 2, 1, 0]);
      const refused = await withKey.get('/api/v1/projects/');
      expect(refused.status).to.equal(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 60);
      // The refusing policy joins the others already announced.
      expect(fieldOf(refused, 'RateLimit')['api-key']).to.deep.equal({ r: 0, t: retryAfter });
      expect(fieldOf(refused, 'RateLimit-Policy')).to.deep.equal({ ip: { q: 1000, w: 60 }, 'api-key': { q: 5, w: 60 } });

      // Per key: the same user's cookie session, and another key of the user, still pass.
      expect((await login.get('/api/v1/projects/')).status).to.equal(200);
      const created = await login.post('/api/v1/users/me/api-keys', { name: 'second', scopes: ['read'] });
      const second = fixture.client({ Authorization: `Bearer ${((await created.json()) as { key: string }).key}` });
      expect((await second.get('/api/v1/projects/')).status).to.equal(200);
    });

    it('an unknown key draws on no key allowance (401 announcing the address policy only)', async () => {
      const unknown = await fixture.client({ Authorization: 'Bearer crk_live_unknown' }).get('/api/v1/projects/');
      expect(unknown.status).to.equal(401);
      expect(Object.keys(fieldOf(unknown, 'RateLimit'))).to.deep.equal(['ip']);
    });
  });

  describe('per address (RATE_LIMIT_PER_IP), on every /api/ route', () => {
    let fixture: AccountsTestApp;
    before(async () => {
      fixture = await startAccountsApp({ RATE_LIMIT_PER_IP: '4', RATE_LIMIT_PER_API_KEY: '100', RATE_LIMIT_WINDOW_SECONDS: '30' });
    });
    after(async () => {
      await fixture?.close();
    });

    it('a public route announces "ip";q=4;w=30 with r decreasing; the 5th from that address → 429 with Retry-After, another address passes', async () => {
      const client = fixture.client();
      const remaining: unknown[] = [];
      for (let request = 0; request < 4; request++) {
        const response = await client.get('/api/v1/auth/check-auth');
        expect(response.status).to.equal(200);
        expect(fieldOf(response, 'RateLimit-Policy')).to.deep.equal({ ip: { q: 4, w: 30 } });
        remaining.push(fieldOf(response, 'RateLimit').ip!.r);
      }
      expect(remaining).to.deep.equal([3, 2, 1, 0]);
      const refused = await client.get('/api/v1/auth/check-auth');
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 30);
      expect(fieldOf(refused, 'RateLimit').ip!.r).to.equal(0);
      expect((await fixture.client().get('/api/v1/auth/check-auth')).status).to.equal(200);
    });

    it('a request with a key answers to both policies, each listed', async () => {
      const { key } = await keyOf(fixture);
      const response = await fixture.client({ Authorization: `Bearer ${key}` }).get('/api/v1/projects/');
      expect(response.status).to.equal(200);
      expect(fieldOf(response, 'RateLimit-Policy')).to.deep.equal({ ip: { q: 4, w: 30 }, 'api-key': { q: 100, w: 30 } });
      expect(Object.keys(fieldOf(response, 'RateLimit'))).to.deep.equal(['ip', 'api-key']);
    });

    it('attack: a path in another letter case is no route (404, never served unlimited): 6 × /API/V1/AUTH/CHECK-AUTH, every operation of the API document upper-cased, the Stripe webhook', async () => {
      const client = fixture.client();
      for (let request = 0; request < 6; request++) expect((await client.get('/API/V1/AUTH/CHECK-AUTH')).status).to.equal(404);
      for (const path of ['/Api/v1/auth/check-auth', '/api/V1/auth/check-auth', '/api/v1/AUTH/check-auth', '/%61pi/v1/auth/check-auth']) expect((await client.get(path)).status, path).to.equal(404);
      const document = await json(await fixture.client().get('/api/v1/openapi.json'));
      const served: string[] = [];
      for (const [template, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
        const path = template.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000').toUpperCase();
        for (const method of Object.keys(operations).filter((name) => ['get', 'post', 'put', 'patch', 'delete'].includes(name))) {
          const response = await fixture.client().fetch(path, { method: method.toUpperCase(), headers: { 'content-type': 'application/json' }, body: method === 'get' ? undefined : '{}' });
          if (response.status !== 404) served.push(`${method.toUpperCase()} ${path} → ${response.status}`);
        }
      }
      expect(served).to.deep.equal([]);
      // the raw-body exception of Stripe's webhook follows the route, not a spelling of it
      expect((await client.post('/API/V1/PAYMENTS/WEBHOOK', { id: 'evt_1' })).status).to.equal(404);
    });

    it('the probes outside /api/ are not limited', async () => {
      const client = fixture.client();
      for (let request = 0; request < 6; request++) {
        const response = await client.get('/healthz');
        expect(response.status).to.equal(200);
        expect(response.headers.get('ratelimit')).to.equal(null);
      }
    });
  });

  describe('over two replicas (issue 42: each replica takes leases of the count, not a Redis round trip per request)', () => {
    let a: AccountsTestApp;
    let b: AccountsTestApp;
    before(async () => {
      const env = {
        RATE_LIMIT_PER_IP: '100',
        RATE_LIMIT_WINDOW_SECONDS: '60',
        REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cutroom-test:'}lease-${randomBytes(3).toString('hex')}:`,
      };
      [a, b] = await Promise.all([startAccountsApp(env), startAccountsApp(env)]);
    });
    after(async () => {
      await a?.close();
      await b?.close();
    });

    it('one address alternating between the replicas gets exactly RATE_LIMIT_PER_IP answers in the window, then 429s on both; r counts down over both', async () => {
      const ip = randomIp();
      const clients = [new Client(a.app, { ip }), new Client(b.app, { ip })];
      const statuses: number[] = [];
      const remaining: number[] = [];
      for (let request = 0; request < 130; request++) {
        const response = await clients[request % 2]!.get('/api/v1/auth/check-auth');
        statuses.push(response.status);
        if (response.status === 200) remaining.push(Number(fieldOf(response, 'RateLimit').ip!.r));
      }
      expect(statuses.filter((status) => status === 200)).to.have.length(100);
      expect(statuses.slice(-20)).to.deep.equal(Array.from({ length: 20 }, () => 429));
      // r is what the window has left as the answering replica knows it: below the quota, and 0 on the answer that took the last point.
      expect(Math.max(...remaining)).to.be.below(100);
      expect(remaining).to.include(0);
    });
  });

  it("a route's own limit is announced too: signup names \"signup\";q=5;w=600 and counts down; the 6th → 429 with Retry-After and r=0", async () => {
    const fixture = await startAccountsApp();
    try {
      const client = fixture.client();
      const remaining: unknown[] = [];
      for (let signup = 0; signup < 5; signup++) {
        const response = await client.post('/api/v1/users/', newSignup());
        expect(response.status).to.equal(201);
        expect(fieldOf(response, 'RateLimit-Policy')).to.deep.equal({ signup: { q: 5, w: 600 } });
        remaining.push(fieldOf(response, 'RateLimit').signup!.r);
      }
      expect(remaining).to.deep.equal([4, 3, 2, 1, 0]);
      const refused = await client.post('/api/v1/users/', newSignup());
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 600);
      expect(fieldOf(refused, 'RateLimit').signup!.r).to.equal(0);
      expect((await json(refused)).detail).to.be.a('string');
    } finally {
      await fixture.close();
    }
  });
});
