import type { AddressInfo } from 'node:net';
import { loadConfig, ConfigError } from './config.ts';
import { buildApp, createServices, recoverUnfinishedJobs } from './app.ts';
import { migrateUp } from './db/orm.ts';

/** Starts the api: config, services, pending migrations (when asked), HTTP server. */
let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

const services = await createServices(config);
if (process.argv.includes('--migrate')) await migrateUp(services.orm, config.DATABASE_URL);
const { koa } = buildApp(services);
await recoverUnfinishedJobs(services).catch((error: unknown) => services.logger.error({ err: error }, 'job recovery failed; unfinished jobs run at the next start'));
const server = koa.listen(config.PORT, config.HOST, () => {
  const { port } = server.address() as AddressInfo;
  services.logger.info({ url: `http://${config.HOST}:${port}` }, 'api listening');
});
server.requestTimeout = 120_000;

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  services.logger.info({ signal }, 'shutting down');
  server.close();
  await services.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
