import type { AddressInfo } from 'node:net';
import { loadConfig, configWarnings, ConfigError } from './config.ts';
import { buildApp, createServices } from './app.ts';
import { migrateUp } from './db/orm.ts';
import { createHttpServer } from './http/server.ts';

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

// Local backend: jobs a previous process left running run again (the outbox retries until the database answers).
const services = await createServices(config, { recoverJobs: config.JOB_BACKEND === 'local' });
for (const warning of configWarnings(config)) services.logger.warn({ config_warning: true }, warning);
if (process.argv.includes('--migrate')) await migrateUp(services.orm, config.DATABASE_URL);
const { koa } = buildApp(services);
const server = createHttpServer(koa.callback(), config, services.logger);
server.listen(config.PORT, config.HOST, () => {
  const { port } = server.address() as AddressInfo;
  services.logger.info({ url: `http://${config.HOST}:${port}` }, 'api listening');
});

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
