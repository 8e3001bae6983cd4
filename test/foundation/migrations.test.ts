import { expect } from 'chai';
import { openOrm } from '../../api/src/db/orm.ts';

describe('database migrations', () => {
  it('the committed migrations produce exactly the schema the entities describe (no drift)', async () => {
    const orm = await openOrm({ DATABASE_URL: process.env.DATABASE_URL!, DATABASE_POOL_MAX: 1 });
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
