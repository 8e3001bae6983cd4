import { loadConfig } from './config.ts';
import { migrateUp, openOrm } from './orm.ts';
import { entities } from './entities.ts';

/** `npm run migrate`: applies pending committed migrations. `--create` writes a new one from the entity diff. */
const config = loadConfig();
const orm = await openOrm(config, entities);
try {
  if (process.argv.includes('--create')) {
    const result = await orm.migrator.create();
    console.log(result.fileName ? `created ${result.fileName}` : 'no schema changes');
  } else {
    await migrateUp(orm, config.DATABASE_URL);
    console.log('migrations applied');
  }
} finally {
  await orm.close();
}
