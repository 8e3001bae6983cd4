import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import type { EntitySchema } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from './config.ts';
import { guardPool } from './db/pool-guard.ts';
import { bundledMigrations } from './db/migration-list.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./db/migrations', import.meta.url));

/** The ORM over `entities`: every entity of the service (entities.ts), or the job host's own in the operator. */
export function ormOptions(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>, entities: EntitySchema[]): Options {
  return {
    clientUrl: config.DATABASE_URL,
    entities,
    extensions: [Migrator],
    pool: { max: config.DATABASE_POOL_MAX },
    // a client lost mid-transaction is given back (Kysely releases it only after a COMMIT or ROLLBACK that worked)
    driverOptions: { onPoolCreated: guardPool },
    // Schema changes go through committed migrations only, never sync at run time.
    migrations: {
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      // in the api's bundle, the migrations built into it; in the sources, the files of MIGRATIONS_DIR
      ...(bundledMigrations ? { migrationsList: bundledMigrations } : {}),
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

export async function openOrm(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>, entities: EntitySchema[]): Promise<MikroORM> {
  return MikroORM.init(ormOptions(config, entities));
}

/** Any fixed number: the advisory lock that lets one of several starting pods migrate at a time. */
const MIGRATION_LOCK = '7165064357633389';

export async function migrateUp(orm: MikroORM, databaseUrl: string): Promise<void> {
  // A session lock on a connection of its own, so the migrator's pool is left whole.
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await orm.migrator.up();
  } finally {
    await lock.end(); // ending the session releases the lock
  }
}
