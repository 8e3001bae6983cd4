import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { Client, signUpAndLogin } from '../support/users.ts';
import { newSignup, randomIp, startAccountsApp, type AccountsTestApp } from './fixtures.ts';

/** Sends `count` requests and returns their statuses, and the last response. */
async function burst(count: number, send: () => Promise<Response>): Promise<{ statuses: number[]; last: Response }> {
  const statuses: number[] = [];
  let last!: Response;
  for (let i = 0; i < count; i++) {
    last = await send();
    statuses.push(last.status);
  }
  return { statuses, last };
}

function expectRetryAfter(response: Response, maxSeconds: number): void {
  expect(response.status).to.equal(429);
  const seconds = Number(response.headers.get('retry-after'));
  expect(seconds).to.be.within(maxSeconds - 5, maxSeconds);
}

describe('rule 7: rate limits, 429 with Retry-After', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());

  it('signup: 5 per IP per 10 minutes', async () => {
    const ip = randomIp();
    const client = new Client(fixture.app, { ip });
    const { statuses, last } = await burst(6, () => client.post('/api/v1/users/', newSignup()));
    expect(statuses).to.deep.equal([201, 201, 201, 201, 201, 429]);
    expectRetryAfter(last, 600);
    expect((await json(last)).detail).to.match(/^Too many requests\. Try again in \d+ seconds\.$/);
    expect((await fixture.client().post('/api/v1/users/', newSignup())).status, 'another IP').to.equal(201);
  });

  it('send-verification: 3 per IP per 5 minutes', async () => {
    const client = fixture.client();
    const { statuses, last } = await burst(4, () => client.post('/api/v1/auth/send-verification', { email: 'someone@example.test' }));
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
    expectRetryAfter(last, 300);
  });

  it('forgot-password: 3 per IP per 5 minutes', async () => {
    const client = fixture.client();
    const { statuses, last } = await burst(4, () => client.post('/api/v1/auth/forgot-password', { email: 'someone@example.test' }));
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
    expectRetryAfter(last, 300);
  });

  it('verification and reset e-mails: 3 per IP per 5 minutes, one allowance for both routes', async () => {
    for (const fourth of ['/api/v1/auth/send-verification', '/api/v1/auth/forgot-password']) {
      const client = fixture.client();
      const statuses = [];
      for (const path of ['/api/v1/auth/send-verification', '/api/v1/auth/send-verification', '/api/v1/auth/forgot-password']) {
        statuses.push((await client.post(path, { email: 'someone@example.test' })).status);
      }
      expect(statuses, fourth).to.deep.equal([200, 200, 200]);
      const last = await client.post(fourth, { email: 'someone@example.test' });
      expectRetryAfter(last, 300);
      expect((await fixture.client().post(fourth, { email: 'someone@example.test' })).status, 'another IP').to.equal(200);
    }
  });

  it('change-password: 5 per 300 seconds (per user)', async () => {
    const { client } = await signUpAndLogin(fixture.app);
    const { statuses, last } = await burst(6, () => client.post('/api/v1/auth/change-password', { current_password: 'wrong guess', new_password: 'whatever password' }));
    expect(statuses).to.deep.equal([400, 400, 400, 400, 400, 429]);
    expectRetryAfter(last, 300);
  });

  it('request-email-change: 3 per 300 seconds (per user)', async () => {
    const account = await signUpAndLogin(fixture.app);
    const { statuses, last } = await burst(4, () =>
      account.client.post('/api/v1/auth/request-email-change', { new_email: `x-${randomBytes(3).toString('hex')}@example.test`, password: account.password }),
    );
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
    expectRetryAfter(last, 300);
  });
});

describe('rule 7: limits are shared across api replicas (Redis)', () => {
  let replicas: TestApp[];
  before(async () => {
    const env = { TRUST_PROXY: 'true', REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}shared-${randomBytes(3).toString('hex')}:` };
    replicas = [await startTestApp(env), await startTestApp(env)];
  });
  after(async () => {
    for (const replica of replicas) await replica.close();
  });

  it('requests to two replicas from one IP draw on one allowance', async () => {
    const ip = randomIp();
    const [a, b] = replicas.map((replica) => new Client(replica, { ip }));
    const statuses = [];
    for (const client of [a, b, a, b]) statuses.push((await client!.post('/api/v1/auth/forgot-password', { email: 'x@example.test' })).status);
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
  });
});
