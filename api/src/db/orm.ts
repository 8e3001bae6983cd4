import { fileURLToPath } from 'node:url';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from '../config.ts';
import { entities } from './entities.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

export function ormOptions(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>): Options {
  return {
    clientUrl: config.DATABASE_URL,
    entities,
    extensions: [Migrator],
    pool: { max: config.DATABASE_POOL_MAX },
    // Schema changes go through committed migrations only, never sync at run time.
    migrations: {
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      glob: '!(*.d).ts',
      transactional: true,
      allOrNothing: true,
      // Each feature commits its own migration; a test proves the migrated schema equals the entities.
      snapshot: false,
      silent: true,
    },
    preferTs: true,
    forceUtcTimezone: true,
    debug: false,
    discovery: { warnWhenNoEntities: false },
  };
}

export async function openOrm(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>): Promise<MikroORM> {
  return MikroORM.init(ormOptions(config));
}

export async function migrateUp(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
