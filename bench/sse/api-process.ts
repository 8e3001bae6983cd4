/**
 * The api as bench/sse/run.ts starts it: a process of its own (so its RSS is the api's
 * alone) built as api/src/main.ts builds it, measured through measured-process.ts. It also
 * watches every EntityManager forked while serving a stream request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { EntityManager } from '@mikro-orm/core';
import { loadConfig } from '../../api/src/config.ts';
import { buildApp, createServices } from '../../api/src/app.ts';
import { createHttpServer } from '../../api/src/http/server.ts';
import { serveMeasurements } from './measured-process.ts';

// Watched, never held: a WeakRef still answering after a full collection is a fork something retains.
const forks: WeakRef<object>[] = [];
const streamRequest = new AsyncLocalStorage<boolean>();
const STREAM_PATH = /^\/api\/v1\/(user-stream|projects\/[^/]+\/events)(\?|$)/;
const fork = EntityManager.prototype.fork;
EntityManager.prototype.fork = function watchedFork(this: EntityManager, ...args: Parameters<EntityManager['fork']>) {
  const forked = fork.apply(this, args);
  if (streamRequest.getStore()) forks.push(new WeakRef(forked));
  return forked;
} as EntityManager['fork'];

const config = loadConfig();
const services = await createServices(config);
const { koa } = buildApp(services);
const handle = koa.callback();
const server = createHttpServer((req, res) => streamRequest.run(STREAM_PATH.test(req.url ?? ''), () => handle(req, res)), config, services.logger);
await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));

serveMeasurements({
  server,
  liveWatched: () => {
    const live = forks.filter((ref) => ref.deref() !== undefined);
    forks.splice(0, forks.length, ...live);
    return live.length;
  },
  close: () => services.close(),
});
