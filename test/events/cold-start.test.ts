import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { Client, signUpAndLogin } from '../support/users.ts';
import { dataOf, isEvent, openSse, type SseStream } from '../support/sse-stream.ts';

const STARTS = 5;
const USERS = 10;
const STREAMS_PER_USER = 5;

/** What went wrong in one fresh start. */
interface StartOutcome {
  /** Opens that did not answer 200, by status. */
  refused: number[];
  /** Users with an open stream whose channel Redis did not list as subscribed. */
  unsubscribed: string[];
  /** Open streams their user's event never reached. */
  missed: number;
}

/**
 * One fresh api process: its first requests are 50 stream opens at once (5 for each of 10
 * users logged in through another instance), then one event per user is published.
 */
async function burstAtStart(users: { id: string; cookies: Map<string, string> }[]): Promise<StartOutcome> {
  const app = await startTestApp({ SSE_MAX_CONNECTIONS_PER_USER: String(STREAMS_PER_USER * 2), SSE_KEEPALIVE_SECONDS: '30' });
  const opened: { userId: string; stream: SseStream }[] = [];
  try {
    const burst = users.flatMap((user) => {
      const client = new Client(app);
      for (const [name, value] of user.cookies) client.cookies.set(name, value);
      return Array.from({ length: STREAMS_PER_USER }, async () => ({ userId: user.id, stream: await openSse(client, '/api/v1/user-stream') }));
    });
    opened.push(...(await Promise.all(burst)));
    const refused = opened.map(({ stream }) => stream.response.status).filter((status) => status !== 200);
    const live = opened.filter(({ stream }) => stream.response.status === 200);
    // Headers go out once the server holds the subscription.
    await Promise.all(live.map(({ stream }) => stream.next((frame) => frame === ': connected', 5000)));
    const unsubscribed: string[] = [];
    for (const userId of new Set(live.map((stream) => stream.userId))) {
      const [, count] = (await app.services.redis.pubsub('NUMSUB', app.services.bus.userChannel(userId))) as [string, number];
      if (Number(count) !== 1) unsubscribed.push(userId);
    }
    for (const user of users) {
      const payload = { media_file_uuid: user.id, media_item_uuid: user.id, display_name: `for ${user.id}`, proxy_status: 'ready' };
      await app.services.bus.publishToUser(user.id, { type: 'media_ready', data: payload });
    }
    const received = await Promise.all(
      live.map(({ userId, stream }) =>
        stream.next(isEvent('media_ready'), 3000).then(
          (frame) => dataOf(frame).display_name === `for ${userId}`,
          () => false,
        ),
      ),
    );
    return { refused, unsubscribed, missed: received.filter((ok) => !ok).length };
  } finally {
    for (const { stream } of opened) stream.close();
    await app.close();
  }
}

describe('event streams at process start: a burst of opens races the Redis subscriber connection (ioredis #2037)', () => {
  let setup: TestApp;

  before(async () => {
    setup = await startTestApp();
  });
  after(async () => {
    await setup.close();
  });

  it(`${USERS * STREAMS_PER_USER} streams of ${USERS} users opened at once as a fresh api's first requests all answer 200 and each receives its user's event, over ${STARTS} fresh starts`, async function () {
    this.timeout(STARTS * 15_000);
    const failures: string[] = [];
    for (let start = 1; start <= STARTS; start++) {
      // Fresh users per start: no lease of an earlier start counts against the cap.
      const users: { id: string; cookies: Map<string, string> }[] = [];
      // One after another: concurrent logins are throttled.
      for (let n = 0; n < USERS; n++) {
        const { user, client } = await signUpAndLogin(setup);
        users.push({ id: user.id, cookies: client.cookies });
      }
      const { refused, unsubscribed, missed } = await burstAtStart(users);
      if (refused.length || unsubscribed.length || missed) {
        failures.push(`start ${start}: ${refused.length} opens answered ${[...new Set(refused)].join('/') || 'none but 200'}; ${unsubscribed.length} users' channels not subscribed under open streams; ${missed} open streams missed their event`);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });
});
