import { ConfigError, loadDomainConfig } from '../../api/src/config.ts';
import { loadOperatorConfig } from './config.ts';
import { startOperator } from './operator.ts';

/** Starts the operator: config, then the composition root; SIGTERM releases the Lease and stops cleanly. */
let configs;
try {
  configs = { config: loadDomainConfig(), operatorConfig: loadOperatorConfig() };
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

const operator = await startOperator(configs);

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  operator.logger.info({ signal }, 'shutting down');
  try {
    await operator.stop({ release: true });
    process.exit(0);
  } catch (error) {
    operator.logger.error({ err: error }, 'unclean shutdown');
    process.exit(1);
  }
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
