import { expect } from 'chai';
import { RESERVATION_MS } from '../../api/src/accounts/lockout.ts';
import { json } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { Client, createAccount, type TestAccount } from '../support/users.ts';
import { randomIp, startAccountsApp, watchPasswordComparisons, type AccountsTestApp, type PasswordComparisons } from './fixtures.ts';

/** LOGIN_MAX_ATTEMPTS (the default): the sixth failure locks. */
const MAX_ATTEMPTS = 5;

interface Guess {
  ip: string;
  password: string;
}

describe('rule 2: login lockout under concurrent guesses (Authentication rule 5)', () => {
  let fixture: AccountsTestApp;
  let comparisons: PasswordComparisons;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());
  beforeEach(() => {
    comparisons = watchPasswordComparisons();
  });
  afterEach(() => comparisons.restore());

  /**
   * Sends `first` all at once, waits until each of them is being compared or answered,
   * then sends `then` at once the same way, while every comparison is held (a slow
   * bcrypt); then lets them all finish. Returns the answers in sending order.
   */
  async function race(account: TestAccount, first: Guess[], then: Guess[]): Promise<Response[]> {
    const release = comparisons.hold();
    let answered = 0;
    const sent: Promise<Response>[] = [];
    const send = async (guesses: Guess[]) => {
      for (const { ip, password } of guesses) {
        sent.push(new Client(fixture.app, { ip }).logIn(account.username, password).finally(() => answered++));
      }
      const expected = sent.length;
      await eventually(async () => (comparisons.started + answered >= expected ? true : undefined), () => `${expected} logins compared or answered (${comparisons.started} + ${answered})`, 10_000, 10);
    };
    try {
      await send(first);
      await send(then);
    } finally {
      release();
    }
    return Promise.all(sent);
  }

  const wrong = (ip: string, count: number, label: string): Guess[] => Array.from({ length: count }, (_, i) => ({ ip, password: `${label} guess ${i}` }));
  const statuses = (responses: Response[]) => responses.map((response) => response.status);
  const count = (values: number[], status: number) => values.filter((value) => value === status).length;

  it('200 guesses at once from one IP, the right password at position 190 while earlier ones are compared → 429; at most LOGIN_MAX_ATTEMPTS + 1 comparisons', async () => {
    const account = await createAccount(fixture.app);
    const ip = randomIp();
    const responses = await race(account, wrong(ip, 190, 'early'), [{ ip, password: account.password }, ...wrong(ip, 9, 'late')]);
    const answers = statuses(responses);
    expect(answers[190], 'the right password, after more than LOGIN_MAX_ATTEMPTS guesses').to.equal(429);
    expect(responses[190]!.headers.get('retry-after')).to.match(/^\d+$/);
    expect(count(answers, 200)).to.equal(0);
    expect(comparisons.started, 'bcrypt comparisons').to.be.at.most(MAX_ATTEMPTS + 1);
    expect(count(answers, 401), '401s').to.be.at.most(MAX_ATTEMPTS);
    expect(count(answers, 401) + count(answers, 429)).to.equal(200);
    const afterwards = await fixture.client().logIn(account.username, account.password);
    expect(afterwards.status, 'the account stays locked').to.equal(429);
    expect(afterwards.headers.get('retry-after')).to.equal('60');
  });

  it('40 guesses at once from 40 IPs against one account, the right password last → 429; at most LOGIN_MAX_ATTEMPTS + 1 comparisons', async () => {
    const account = await createAccount(fixture.app);
    const guesses = Array.from({ length: 39 }, (_, i) => ({ ip: randomIp(), password: `guess ${i}` }));
    const responses = await race(account, guesses, [{ ip: randomIp(), password: account.password }]);
    const answers = statuses(responses);
    expect(answers[39], 'the right password, after more than LOGIN_MAX_ATTEMPTS guesses').to.equal(429);
    expect(count(answers, 200)).to.equal(0);
    expect(comparisons.started, 'bcrypt comparisons').to.be.at.most(MAX_ATTEMPTS + 1);
    expect(count(answers, 401), '401s').to.be.at.most(MAX_ATTEMPTS);
    expect((await fixture.client().logIn(account.username, account.password)).status, 'the account stays locked').to.equal(429);
  });

  it('the right password beside LOGIN_MAX_ATTEMPTS wrong guesses in flight still logs in, as it would after them', async () => {
    const account = await createAccount(fixture.app);
    const ip = randomIp();
    const responses = await race(account, wrong(ip, MAX_ATTEMPTS, 'wrong'), [{ ip, password: account.password }]);
    expect(statuses(responses)).to.deep.equal([401, 401, 401, 401, 401, 200]);
  });

  it('guesses beyond the places left while others are compared → 429 "at once" with Retry-After 1, nothing counted', async () => {
    const account = await createAccount(fixture.app);
    const ip = randomIp();
    const release = comparisons.hold();
    const inFlight = wrong(ip, MAX_ATTEMPTS + 1, 'held').map(({ password }) => new Client(fixture.app, { ip }).logIn(account.username, password));
    try {
      await eventually(async () => (comparisons.started === MAX_ATTEMPTS + 1 ? true : undefined), 'the held comparisons', 10_000, 10);
      const refused = await new Client(fixture.app, { ip: randomIp() }).logIn(account.username, account.password);
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('1');
      expect((await json(refused)).detail).to.equal('Too many login attempts at once. Try again in a moment.');
      expect(comparisons.started, 'no comparison for the refused attempt').to.equal(MAX_ATTEMPTS + 1);
    } finally {
      release();
    }
    expect(statuses(await Promise.all(inFlight)).sort((a, b) => a - b), 'the one settled last locks').to.deep.equal([401, 401, 401, 401, 401, 429]);
  });

  it('an attempt never settled frees its place after 30 s by the service clock, and the right password is refused past a lock a concurrent failure set meanwhile', async () => {
    const account = await createAccount(fixture.app);
    const ip = randomIp();
    const client = new Client(fixture.app, { ip });
    for (let i = 0; i < MAX_ATTEMPTS; i++) expect((await client.logIn(account.username, `wrong ${i}`)).status).to.equal(401);

    const release = comparisons.hold((password) => password === account.password);
    const right = new Client(fixture.app, { ip }).logIn(account.username, account.password);
    let lockedMeanwhile: Response;
    try {
      await eventually(async () => (comparisons.started === MAX_ATTEMPTS + 1 ? true : undefined), 'the right password being compared', 10_000, 10);
      expect((await client.logIn(account.username, 'wrong again')).status, 'no place left').to.equal(429);
      fixture.clock.advance(RESERVATION_MS + 1000);
      lockedMeanwhile = await client.logIn(account.username, 'wrong at last');
    } finally {
      release();
    }
    expect(lockedMeanwhile.status, 'the place held too long was freed; the sixth failure locks').to.equal(429);
    expect(lockedMeanwhile.headers.get('retry-after')).to.equal('60');
    const refused = await right;
    expect(refused.status, 'the right password settled after the lock').to.equal(429);
    expect(refused.headers.getSetCookie()).to.deep.equal([]);
    fixture.clock.advance(60_000);
    expect((await client.logIn(account.username, account.password)).status, 'once the lock ends').to.equal(200);
  });
});
