import { expect } from 'chai';
import { openOrm } from '../../api/src/orm.ts';
import { entities } from '../../api/src/entities.ts';

describe('database migrations', () => {
  it('the committed migrations produce exactly the schema the entities describe (no drift)', async () => {
    const orm = await openOrm({ DATABASE_URL: process.env.DATABASE_URL!, DATABASE_POOL_MAX: 1 }, entities);
    try {
      const pending = await orm.migrator.getPending();
      expect(pending.map((m) => m.name)).to.deep.equal([]);
      const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: true });
      expect(diff.trim(), diff).to.equal('');
    } finally {
      await orm.close();
    }
  });
});

describe('database migrations from several pods at once', () => {
  it('each migration is applied exactly once when several processes start together', async () => {
    const { default: pg } = await import('pg');
    const { migrateUp: up } = await import('../../api/src/orm.ts');
    const server = new URL(process.env.DATABASE_URL!);
    const name = `cutroom_migrate_race_${process.pid}`;
    const admin = new pg.Client({ connectionString: new URL('/postgres', server).toString() });
    await admin.connect();
    await admin.query(`create database "${name}"`);
    try {
      const url = new URL(`/${name}`, server).toString();
      const orms = await Promise.all([1, 2, 3].map(() => openOrm({ DATABASE_URL: url, DATABASE_POOL_MAX: 1 }, entities)));
      try {
        await Promise.all(orms.map((orm) => up(orm, url)));
        const executed = await orms[0]!.migrator.getExecuted();
        const files = await orms[0]!.migrator.getPending();
        expect(files).to.deep.equal([]);
        expect(new Set(executed.map((m) => m.name)).size).to.equal(executed.length);
        expect(executed.length).to.be.greaterThan(0);
      } finally {
        await Promise.all(orms.map((orm) => orm.close()));
      }
    } finally {
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    }
  });
});
