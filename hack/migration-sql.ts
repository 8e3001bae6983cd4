import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from '../api/src/orm.ts';
import { entities } from '../api/src/entities.ts';

/**
 * Prints the SQL that would bring the committed migrations up to the entities, using a
 * scratch database: the starting point of a new migration file in api/src/db/migrations/.
 */
const server = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const scratch = `cutroom_migration_sql_${process.pid}`;
const admin = new pg.Client({ connectionString: server.toString() });
await admin.connect();
await admin.query(`create database "${scratch}"`);
try {
  const url = new URL(server);
  url.pathname = `/${scratch}`;
  const orm = await MikroORM.init(ormOptions({ DATABASE_URL: url.toString(), DATABASE_POOL_MAX: 1 }, entities));
  try {
    await orm.migrator.up();
    console.log((await orm.schema.getUpdateSchemaSQL({ wrap: false })).trim() || '-- no changes');
  } finally {
    await orm.close();
  }
} finally {
  await admin.query(`drop database if exists "${scratch}" with (force)`);
  await admin.end();
}
