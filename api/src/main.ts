import { enableCompileCache } from 'node:module';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Loading modules is most of start-up: later starts reuse their compiled code (stripped
// TypeScript, bytecode) from NODE_COMPILE_CACHE, by default a directory under the OS temp dir.
enableCompileCache();

// Until the api is up, a stop signal ends start-up at once through process.exit, so the log
// lines written so far are flushed (Node's default for the signal would kill the process with them).
const exitDuringStartup = (signal: NodeJS.Signals) => process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
process.once('SIGINT', exitDuringStartup);
process.once('SIGTERM', exitDuringStartup);
const { loadConfig, configWarnings, ConfigError } = await import('./config.ts');
const { buildApp, createServices } = await import('./app.ts');
const { migrateUp } = await import('./orm.ts');
const { createHttpServer } = await import('./http/server.ts');

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
  setTimeout(giveBackStartupMemory, STARTUP_SETTLE_MS).unref();
});

/** How long after listening the start-up memory is given back (the first probes come and go first). */
const STARTUP_SETTLE_MS = 500;

/**
 * Loading ~1,500 modules grows V8's young generation to its maximum (~64 MB), and an idle
 * process never collects again, so that memory would stay resident: one memory-reducing
 * collection once started gives it back (about 40 MB of RSS). It runs once.
 */
function giveBackStartupMemory(): void {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  services.logger.info({ signal }, 'shutting down');
  server.close();
  await services.close();
  process.exit(0);
}
process.off('SIGINT', exitDuringStartup);
process.off('SIGTERM', exitDuringStartup);
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
