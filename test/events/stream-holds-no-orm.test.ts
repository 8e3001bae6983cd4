import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { EntityManager } from '@mikro-orm/core';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { openSse, type SseStream } from '../support/sse-stream.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const macrotask = () => new Promise((resolve) => setImmediate(resolve));
const seconds = (count: number) => new Promise((resolve) => setTimeout(resolve, count * 1000));

/**
 * An open stream lives for hours: whatever it keeps is multiplied by every open stream. The
 * opening checks need the database (the session's user, the project's owner); once the stream
 * is live nothing of the ORM may stay reachable from it: not the request's forked
 * EntityManager, not MikroORM's RequestContext fork, not an entity loaded by the checks.
 */
describe('event streams hold no EntityManager once open (issue 14)', function () {
  this.timeout(30_000);
  let app: TestApp;
  let user: SignedIn;
  let projectId: string;
  const fork = EntityManager.prototype.fork;
  /** WeakRefs to the forks made while a stream opens: watched, never held. */
  let forks: WeakRef<object>[] | undefined;

  before(async () => {
    // Fresh, so the first stream also creates the shared subscriber connection.
    app = await startTestApp({ SSE_KEEPALIVE_SECONDS: '1' });
    user = await signUpAndLogin(app);
    projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Streams' }))).uuid;
    EntityManager.prototype.fork = function watchedFork(this: EntityManager, ...args: Parameters<EntityManager['fork']>) {
      const forked = fork.apply(this, args);
      forks?.push(new WeakRef(forked));
      return forked;
    } as EntityManager['fork'];
  });
  after(async () => {
    EntityManager.prototype.fork = fork;
    await app.close();
  });

  /** Opens the stream while watching forks; returns it and the forks its request made. */
  async function opened(path: string): Promise<{ stream: SseStream; made: WeakRef<object>[] }> {
    forks = [];
    const stream = await openSse(user.client, path);
    await stream.next((frame) => frame === ': connected');
    const made = forks;
    forks = undefined;
    return { stream, made };
  }

  /** The forks still reachable after full collections (WeakRefs made in a turn stay alive until it ends). */
  async function survivors(made: WeakRef<object>[]): Promise<number> {
    for (let round = 0; round < 3; round++) {
      await macrotask();
      gc();
    }
    return made.filter((ref) => ref.deref() !== undefined).length;
  }

  // The project check always reads the database; the session check may be served without a fork.
  for (const [kind, path, forksAtLeast] of [
    ['user stream', () => '/api/v1/user-stream', 0],
    ['project stream', () => `/api/v1/projects/${projectId}/events`, 1],
  ] as const) {
    it(`${kind}: every EntityManager forked to open it is released once it is live, across keepalives`, async () => {
      const { stream, made } = await opened(path());
      try {
        expect(made.length, 'forks made by the opening checks').to.be.at.least(forksAtLeast);
        // Keepalives re-check the session: they must not bring the request's context back.
        await stream.next((frame) => frame === ': keepalive', 5000);
        await seconds(1);
        expect(await survivors(made), 'EntityManagers still reachable from an open stream').to.equal(0);
        // Still a working stream.
        await stream.next((frame) => frame === ': keepalive', 5000);
      } finally {
        stream.close();
      }
    });
  }
});
